"""Which proxy a request goes through: the environment read exactly as httpx2 (and so solana-py) reads it.

One command talks to the service over this module's transport and to Solana RPC over httpx2; both
must agree on the proxy, or a request would leave through a route the user never configured.
So the rules are httpx2's `get_environment_proxies` and `URLPattern`, reimplemented here because
importing httpx2 costs more than the whole service request: `urllib.request.getproxies()`
(HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and their lower-case forms, plus the system settings on
Windows and macOS), a proxy without a scheme is `http://`, and NO_PROXY entries as curl writes
them: `*`, host names (`example.com` also covers subdomains, `.example.com` and `*.example.com`
only subdomains), `host:port`, IPv4 and IPv6 addresses, CIDR ranges, and `scheme://host` forms.
"""

from __future__ import annotations

import base64
import ipaddress
import os
import sys
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


class Proxy(NamedTuple):
    scheme: str
    host: str
    port: int
    # `Basic ...` from credentials in the proxy URL; sent as Proxy-Authorization, never shown.
    authorization: str | None

    @property
    def url(self) -> str:
        """The proxy's address for messages: never its credentials."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def __repr__(self) -> str:  # the credentials stay out of reprs, logs and tracebacks
        return f"Proxy({self.url!r}, credentials={'yes' if self.authorization else 'no'})"


def proxy_for(scheme: str, host: str, port: int | None) -> Proxy | None:
    """The proxy for a request to scheme://host:port, or None to connect directly."""
    if sys.platform not in ("darwin", "win32") and not any(
        name[-6:].lower() == "_proxy" and value for name, value in os.environ.items()
    ):
        # What getproxies() would find here (it reads only *_proxy variables off macOS and
        # Windows), without importing urllib.request on every run.
        return None
    from urllib.request import getproxies

    found = getproxies()
    configured = found.get(scheme) or found.get("all")
    if not configured:
        return None
    # httpx2 drops an explicit default port (https://h:443 is https://h) before matching.
    target_port = None if port == DEFAULT_PORTS.get(scheme) else port
    for entry in (e.strip() for e in found.get("no", "").split(",")):
        if entry == "*":
            return None
        if entry and _bypasses(entry, scheme, host.lower().strip("[]"), target_port):
            return None
    return parse_proxy_url(configured if "://" in configured else f"http://{configured}")


def parse_proxy_url(url: str) -> Proxy:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    authorization = None
    if parts.username is not None:
        credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        authorization = "Basic " + base64.b64encode(credentials).decode("ascii")
    return Proxy(scheme, parts.hostname or "", parts.port or DEFAULT_PORTS.get(scheme, 80), authorization)


def _bypasses(entry: str, scheme: str, host: str, port: int | None) -> bool:
    """Whether one NO_PROXY entry sends scheme://host:port direct (httpx2's mounts set to None)."""
    pattern_scheme, written_as_url, rest = entry.partition("://")
    if not written_as_url:
        pattern_scheme, rest = "all", entry
    if pattern_scheme.lower() not in ("all", scheme):
        return False
    address, slash, prefix = rest.partition("/")
    if address.count("[") != address.count("]"):
        return False  # malformed: httpx2 ignores the entry
    bare = address[1:-1] if address.startswith("[") and address.endswith("]") else address
    if _is_ip(bare):
        return _in_network(host, bare, prefix) if slash else host == bare.lower()
    if slash:
        return False  # a path or a malformed range: httpx2 ignores the entry
    pattern_host, pattern_port = _host_port(address)
    if pattern_port is not None and pattern_port != port:
        return False
    pattern_host = pattern_host.lower()
    if not pattern_host or (not written_as_url and pattern_host.startswith("*") and not pattern_host.startswith("*.")):
        return False  # no host, or `**name` once httpx2 adds its star: an entry it cannot parse
    exact = written_as_url or address.startswith("[") or (pattern_host == "localhost" and pattern_port is None)
    if not exact and not pattern_host.startswith("*"):
        pattern_host = "*" + pattern_host  # a bare name covers its subdomains too
    return _host_matches(pattern_host, host)


def _host_matches(pattern: str, host: str) -> bool:
    if pattern in ("", "*"):
        return True
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    if pattern.startswith("*"):
        return host == pattern[1:] or host.endswith("." + pattern[1:])
    return host == pattern


def _host_port(text: str) -> tuple[str, int | None]:
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port_text = text.partition(":")
    return host, int(port_text) if port_text.isdigit() else None


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _in_network(host: str, address: str, prefix: str) -> bool:
    if not prefix.isdigit():
        return False
    try:
        return ipaddress.ip_address(host.strip("[]")) in ipaddress.ip_network(f"{address}/{prefix}", strict=False)
    except ValueError:
        return False
