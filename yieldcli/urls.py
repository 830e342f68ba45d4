"""Service URLs: what we accept, and where the API key may travel. No httpx import (start-up time)."""

from __future__ import annotations

from urllib.parse import urlsplit

from yieldcli.errors import UsageError

def is_loopback(host: str | None) -> bool:
    """localhost, 127.0.0.0/8 or ::1 (brackets allowed)."""
    if not host:
        return False
    if host == "localhost":
        return True
    import ipaddress  # only plain-http URLs get here

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_base_url(url: str) -> str:
    """Refuse URLs we cannot use, and plain http to anything but loopback (the key would travel in clear)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"invalid API URL {url!r}: expected http(s)://host[:port]")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise UsageError(
            f"refusing to send the API key over plain http to {parts.hostname}",
            hint="use an https:// URL (plain http is allowed for loopback addresses only)",
        )
    return url.rstrip("/")
