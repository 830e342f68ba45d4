"""URLs we are given (service and Solana RPC): what we accept, how they are shown, where the API key
may travel. Pure and cheap: no httpx import (start-up time)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import SplitResult, parse_qsl, quote, unquote, urlsplit

from yieldcli.errors import UsageError
from yieldcli.files import printable

T = TypeVar("T")
# Real service and RPC URLs (an API key included) are under 200 characters; the HTTP clients refuse
# much longer ones with errors of their own, after the command has already started.
MAX_URL_LENGTH = 2048
# A host this long cannot be a DNS name (253 characters at most): cut it short when shown.
_MAX_SHOWN_HOST = 64
_INVALID = "<invalid URL>"


def redact_url(url: str) -> str:
    """scheme://host[:port], plus `/…` when a path or query was dropped.

    Providers put API keys in the userinfo, the path or the query, so only scheme, host and port
    are ever shown (in errors, --verbose traces, JSON output). Never raises, whatever the text.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return _INVALID
    if not parts.scheme or not parts.netloc:
        return _INVALID
    if len(host) > _MAX_SHOWN_HOST:
        host = host[:_MAX_SHOWN_HOST] + "…"
    host = printable(host)  # control characters would reach the terminal as they are
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    hidden = parts.path not in ("", "/") or parts.query or parts.fragment
    return f"{parts.scheme}://{host}{port}" + ("/…" if hidden else "")


def scrub(text: str, url: str, *secrets: str | None) -> str:
    """`text` (a message a server sent back) with the parts of `url` that may be secret, and each of
    `secrets` (the API key), replaced by `…`.

    Servers echo the path they were asked for ("Not found: GET /v1/KEY/health") or the key itself
    ("invalid x-api-key KEY"); every part of the URL but its scheme, host and port (`url_secrets`)
    goes, and a secret in every form a server may echo it: as it is, percent-encoded, base64 and hex.
    """
    pieces = url_secrets(url)
    for secret in secrets:
        pieces += secret_forms(secret)
    return hide_all(text, pieces)


def hide_all(text: str, pieces: list[str]) -> str:
    """`text` with each of `pieces` replaced by `…` in any case (a server may echo a key upper-cased),
    longest first (a path goes whole before a shorter piece of it); pieces under 4 characters ("/v1",
    "a") are no secret and would only garble it."""
    for piece in sorted({s for s in pieces if len(s) >= _MIN_PIECE}, key=len, reverse=True):
        if piece.lower() in text.lower():
            text = re.sub(re.escape(piece), "…", text, flags=re.IGNORECASE)
    return text


_MIN_PIECE = 4


def keep(into: list[str], value: T, forms: Callable[[str], list[str]] | None = None, shown: str | None = None) -> T:
    """`value`, once what of it must never be shown (`forms` of `shown`, or of the value itself; by
    default a URL's `url_secrets`) is added to `into`: a run's secrets, recorded where they are read."""
    into.extend((forms or url_secrets)(str(value) if shown is None else shown))
    return value


def url_secrets(url: str | None) -> list[str]:
    """Every part of `url` that is not its scheme, host or port, as a server may write it back: the
    user name and password (together too, as HTTP Basic sends them), the path and each of its
    segments, the query, each of its values (and `name=value`) and the fragment; each as written,
    decoded and in the forms of `secret_forms`.
    Providers put their keys in any of these (`/v2/KEY`, `?api-key=KEY`, `https://KEY@host`)."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return []
    pieces = [user or "", password or "", parts.path.rstrip("/"), parts.query, parts.fragment]
    pieces += [f"{user}:{password}", parts.netloc.rpartition("@")[0]] if user or password else []  # Basic auth
    pieces += parts.path.split("/")
    pieces += [part for item in parts.query.split("&") for part in (item, *item.split("=", 1)[1:])]
    pieces += [value for _, value in parse_qsl(parts.query, keep_blank_values=True)]
    found: list[str] = []
    for piece in pieces:
        for form in (piece, unquote(piece)):
            if len(form) >= _MIN_PIECE:
                found += [form, quote(form, safe=""), *secret_forms(form)]
    return list(dict.fromkeys(found))


def secret_forms(secret: str | None) -> list[str]:
    """The ways a secret may be written back to us: as it is, percent-encoded (as a URL quotes it, and
    every byte), base64 (standard and URL-safe, inside a longer encoded text too) and hex."""
    if not secret or len(secret) < 8:  # shorter is no key; replacing it would garble messages
        return []
    raw = secret.encode("utf-8", "surrogatepass")
    every_byte = "".join(f"%{byte:02X}" for byte in raw)
    escaped = [
        "".join(f"\\u{ord(c):04x}" for c in secret),  # as JSON escapes every character
        "".join(f"&#{ord(c)};" for c in secret),  # as HTML entities
        "".join(f"&#x{ord(c):x};" for c in secret),
    ]
    forms = [secret, quote(secret, safe=""), every_byte, *escaped, *_base64_cores(raw)]
    return list(dict.fromkeys([*forms, raw.hex(), raw.hex(":")]))


def _base64_cores(raw: bytes) -> list[str]:
    """`raw` in base64 wherever it starts in a longer text (`k=KEY`, `user:KEY` as HTTP Basic sends it):
    for each of the three byte offsets, the characters that only `raw`'s bits decide."""
    import base64

    cores = []
    for offset in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(bytes(offset) + raw).decode()
            cores.append(text[-(-8 * offset // 6) : 8 * (offset + len(raw)) // 6])
        if offset == 0:
            cores += [base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()]
    return cores


def check_http_url(url: str, what: str) -> SplitResult:
    """An http(s) URL the standard library and httpx can both use, or a UsageError naming `what`.

    Whatever is wrong (length, spaces, port, IPv6 brackets, a host name DNS cannot hold) is said in
    one line before any request, with the URL redacted.
    """
    if len(url) > MAX_URL_LENGTH:
        raise UsageError(f"the {what} is too long ({len(url)} characters; at most {MAX_URL_LENGTH})")
    shown = redact_url(url)
    shown = "" if shown == _INVALID else f" {shown}"
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise UsageError(
            f"invalid {what}{shown}: it contains spaces or control characters",
            hint="percent-encode them (a space is %20)",
        )
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"invalid {what}{shown}: {_url_problem(exc)}") from None
    if parts.scheme not in ("http", "https") or not host:
        raise UsageError(f"invalid {what}{shown}: expected http(s)://host[:port]")
    if port == 0:
        raise UsageError(f"invalid {what}{shown}: port 0 cannot be connected to")
    try:
        host.encode("idna")
    except UnicodeError:
        raise UsageError(f"invalid {what}{shown}: {host[:_MAX_SHOWN_HOST]!r} is not a valid host name") from None
    return parts


def _url_problem(exc: ValueError) -> str:
    text = str(exc)
    if "Port out of range" in text:
        return "the port must be between 1 and 65535"
    if "Port could not be cast" in text:
        return "the port is not a number"
    if "IPv6" in text or "IPv4" in text:
        return "the address in brackets is not a valid IPv6 address"
    return "not a valid URL"


def is_loopback(host: str | None) -> bool:
    """localhost, 127.0.0.0/8 or ::1 (brackets allowed)."""
    if not host:
        return False
    if host == "localhost":
        return True

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_base_url(url: str) -> str:
    """Refuse URLs we cannot use, and plain http to anything but loopback (the key would travel in clear)."""
    parts = check_http_url(url, "API URL")
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise UsageError(
            f"refusing to send the API key over plain http to {redact_url(url)}",
            hint="use an https:// URL (plain http is allowed for loopback addresses only)",
        )
    return url.rstrip("/")
