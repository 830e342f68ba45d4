"""The transport seam: what `Client(transport=...)` and `AsyncClient(transport=...)` take, as httpx's does.

A transport is handed one `Request` (method, URL, headers, body) and gives back one `Response`
(status, headers, body): nothing else. Everything above the wire stays the client's own, the same
with any transport: the x-api-key header, retries of busy answers with backoff, answers turned into
errors with a `kind`, redirects never followed, pages of a listing in order. A transport that raises
what a socket raises (`ConnectionRefusedError`, `TimeoutError`, `ssl.SSLError`: any `OSError`), or a
`TransportError` with its kind, fails the request as that network failure would: a `NetworkError`
of the same kind, retried as one. Anything else it raises reaches the caller as it is.

`yieldcli.testing.MockTransport` is the one that ships; `Request`, `Response` and the two protocols
are public there too. Without a transport the clients move their own bytes (`yieldcli.api.transport`
and the fan-out of pages, or httpx2): this module is not imported then.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import parse_qsl, unquote, urlsplit

from yieldcli.api import transport as wire
from yieldcli.api.transport import TransportError
from yieldcli.secrets import mask

# Header values a repr never shows whole.
_SECRET_HEADERS = frozenset({"x-api-key", "authorization", "proxy-authorization"})
_UNSET: Any = object()


class Headers(dict[str, str]):
    """Header names in lower case; the API key's value is masked in the repr (a failed assertion, a log)."""

    def __repr__(self) -> str:
        shown = {name: mask(value) if name in _SECRET_HEADERS else value for name, value in self.items()}
        return repr(shown)


class Request:
    """One request of the service client, as a transport is handed it.

    `url` is absolute (`https://api.example/breeze-balances/WALLET?page=2&limit=100`), `headers` have
    lower-case names (x-api-key among them when the client has a key), `content` is the body (empty
    for a GET), `timeout` the client's, in seconds, for a transport that goes over a network."""

    __slots__ = ("_shown", "content", "headers", "method", "timeout", "url")

    def __init__(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes = b"",
        timeout: float | None = None,
    ):
        self.method = method
        self.url = url
        self.headers = Headers({name.lower(): value for name, value in (headers or {}).items()})
        self.content = content
        self.timeout = timeout
        self._shown = url

    @property
    def path(self) -> str:
        """The URL's path, decoded (`/strategy-info/ID`)."""
        return unquote(urlsplit(self.url).path)

    @property
    def params(self) -> dict[str, str]:
        """The query's parameters (`{"page": "2", "limit": "100"}`)."""
        return dict(parse_qsl(urlsplit(self.url).query, keep_blank_values=True))

    def json(self) -> Any:
        """The body, decoded (a POST's `{"params": {...}}`)."""
        return json.loads(self.content)

    def __repr__(self) -> str:
        return f"<Request({self.method!r}, {self._shown!r})>"


class Response:
    """What a transport gives back: `Response(200, json={...})`, `Response(503, headers={"retry-after": "0"})`,
    `Response(200, text="OK")` or `Response(200, content=b"...")`. Header names are kept in lower case;
    `json=` and `text=` set the content type unless `headers` give one."""

    __slots__ = ("content", "headers", "status_code")

    def __init__(
        self,
        status_code: int = 200,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        text: str | None = None,
        json: Any = _UNSET,
    ):
        given = {name.lower(): value for name, value in (headers or {}).items()}
        if sum(x is not None for x in (content, text)) + (json is not _UNSET) > 1:
            raise TypeError("give the body once: content=, text= or json=")
        kind = None
        if json is not _UNSET:
            content, kind = _json_bytes(json), "application/json"
        elif text is not None:
            content, kind = text.encode(), "text/plain; charset=utf-8"
        if kind is not None:
            given.setdefault("content-type", kind)
        if content is not None and not isinstance(content, bytes):
            raise TypeError(f"content= takes bytes, not {type(content).__name__}")
        self.status_code = status_code
        self.headers = Headers(given)
        self.content = content or b""

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)

    def __repr__(self) -> str:
        return f"<Response [{self.status_code}]>"


class Transport(Protocol):
    """What `Client(transport=...)` takes. If it also has `close()`, closing the client calls it."""

    def handle_request(self, request: Request) -> Response: ...


class AsyncTransport(Protocol):
    """What `AsyncClient(transport=...)` takes. If it also has `aclose()`, closing the client awaits it."""

    async def handle_async_request(self, request: Request) -> Response: ...


class Core(Protocol):
    """What a transport's requests need of the client's core (`yieldcli.api.core.ClientCore`)."""

    base_url: str
    shown_url: str

    def scrubbed(self, text: str) -> str: ...


class Handed:
    """A transport the caller gave, in the service clients' own terms: (method, target, headers, body)
    in, `yieldcli.api.transport.Response` out, or a `TransportError` raised as their own transport's."""

    def __init__(self, given: Transport | AsyncTransport, core: Core, timeout: float, *, blocking: bool):
        method = "handle_request" if blocking else "handle_async_request"
        if not callable(getattr(given, method, None)):
            client, other = ("Client", "AsyncClient") if blocking else ("AsyncClient", "Client")
            raise TypeError(
                f"{client}(transport=...) takes an object with a {method}(request) method; "
                f"{type(given).__name__} has none (is it a transport for {other}?)"
            )
        self._given: Any = given
        self._core = core
        self._timeout = timeout
        parts = urlsplit(core.base_url)
        # As the wire would carry it: no user:password@ (never sent in a URL), the base URL's path kept.
        self._origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path.rstrip('/')}"
        self._host = parts.hostname or ""

    def request(self, method: str, target: str, headers: dict[str, str], body: bytes | None = None) -> wire.Response:
        handed = self._request(method, target, headers, body)
        try:
            answer = self._given.handle_request(handed)
        except (OSError, TransportError) as exc:
            raise self._error(exc) from None
        return self._response(answer)

    async def request_async(
        self, method: str, target: str, headers: dict[str, str], body: bytes | None = None
    ) -> wire.Response:
        handed = self._request(method, target, headers, body)
        try:
            answer = await self._given.handle_async_request(handed)
        except (OSError, TransportError) as exc:
            raise self._error(exc) from None
        return self._response(answer)

    def close(self) -> None:
        close = getattr(self._given, "close", None)
        if callable(close):
            close()

    async def aclose(self) -> None:
        aclose = getattr(self._given, "aclose", None)
        if callable(aclose):
            await aclose()

    def _request(self, method: str, target: str, headers: dict[str, str], body: bytes | None) -> Request:
        request = Request(method, self._origin + target, headers=headers, content=body or b"", timeout=self._timeout)
        request._shown = self._core.shown_url + target  # the base URL's path may hold a key: not in a repr
        return request

    def _response(self, answer: object) -> wire.Response:
        if not isinstance(answer, Response):
            raise TypeError(f"the transport answered {type(answer).__name__}, not a yieldcli.testing.Response")
        return wire.Response(answer.status_code, dict(answer.headers), answer.content)

    def _error(self, exc: OSError | TransportError) -> TransportError:
        """The failure as the client's own transport would have reported it, with nothing secret in its words."""
        error = exc if isinstance(exc, TransportError) else wire.network_error(exc, self._host)
        return TransportError(self._core.scrubbed(str(error)), error.kind)


def _json_bytes(value: Any) -> bytes:
    try:
        return json.dumps(value).encode()
    except TypeError as exc:  # a Decimal or a float's stand-in: amounts go as the service sends them, integers
        raise TypeError(f"json= takes what JSON holds: {exc}") from None
