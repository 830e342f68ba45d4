"""What the sync and async service clients share: requests, retries, and answers turned into errors.

Each client only moves bytes (`yieldcli.api.sync` on `http.client`, `yieldcli.api.aio` on httpx2)
and sleeps its own way; everything else is decided here, so both behave identically.
Errors carry no advice on how to fix them: they say what happened, and `kind` says it for programs.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, Union
from urllib.parse import urlencode, urlsplit

from yieldcli import exact_json
from yieldcli.api.endpoints import Endpoint, Endpoints
from yieldcli.api.limits import MAX_IDLE
from yieldcli.api.page_text import Deferred
from yieldcli.api.transport import Response, TransportError
from yieldcli.errors import AuthError, NetworkError, ServiceError, UsageError, YieldError
from yieldcli.secrets import mask
from yieldcli.urls import check_base_url, redact_url, scrub
from yieldcli.version import __version__

if TYPE_CHECKING:
    from yieldcli.api.seam import AsyncTransport, Transport

# A decoded JSON body.
JSON = Union[dict[str, Any], list[Any], str, int, float, bool, None]
Query = Mapping[str, Union[str, int, bool, None]]
Log = Callable[[str], None]

MISSING_KEY_MESSAGE = "Missing credentials"
AUTH_MESSAGES = (MISSING_KEY_MESSAGE, "API key invalid or doesn't exist")
RETRY_STATUSES = frozenset({429, 502, 503, 504})

A = TypeVar("A")  # what a request gives back: its JSON (sync), or an awaitable of it (async)


class RetryPolicy(NamedTuple):
    """Bounded exponential backoff with full jitter; `Retry-After` wins when the service sends it."""

    attempts: int = 4
    base_delay: float = 0.25
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)

        return random.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))


class Request(NamedTuple):
    method: str
    path: str  # for messages: no query
    target: str  # path and query, as sent
    headers: dict[str, str]
    body: bytes | None
    attempts: int


class Done(NamedTuple):
    body: JSON
    deferred: Deferred | None = None  # the body not decoded yet, when asked (then `body` is None)


class Retry(NamedTuple):
    delay: float


class ClientCore:
    def __init__(
        self, base_url: str, api_key: str | None, *, retry: RetryPolicy = RetryPolicy(), log: Log | None = None
    ):
        self.base_url = check_base_url(_parsable(base_url))
        # What errors and --verbose show: the URL may carry credentials (user:password@, ?api_key=).
        self.shown_url = redact_url(self.base_url)
        self._has_key = bool(api_key)

        self._key_shown = mask(api_key)  # as every other place shows a key
        self._retry = retry
        self._log = log
        self._headers = {"user-agent": f"yield/{__version__}", "accept": "application/json"}
        if api_key:
            self._headers["x-api-key"] = api_key

    # --- requests ---------------------------------------------------------------------------------

    def request(self, endpoint: Endpoint, arguments: tuple[Any, ...] = (), keywords: Query | None = None) -> Request:
        """The request of a row of the endpoint table (`yieldcli.api.endpoints`), for these arguments."""
        path, query = endpoint.target(arguments, keywords or {})
        return self._without_body(endpoint.method, path, query, self._retry.attempts if endpoint.retried else 1)

    def get(self, path: str, query: Query | None = None) -> Request:
        return self._without_body("GET", path, query, self._retry.attempts)

    def read_headers(self) -> dict[str, str]:
        """The headers of every request without a body."""
        return dict(self._headers)

    def _without_body(self, method: str, path: str, query: Query | None, attempts: int) -> Request:
        params = {k: str(v).lower() if isinstance(v, bool) else v for k, v in (query or {}).items() if v is not None}
        target = path + (f"?{urlencode(params)}" if params else "")
        return Request(method, path, target, self.read_headers(), None, attempts)

    def post(self, path: str, params: Mapping[str, Any]) -> Request:
        """POST `{"params": ...}`. Never retried: a repeated deposit request is not harmless to guess about."""
        body = json.dumps({"params": {k: v for k, v in params.items() if v is not None}}).encode()
        headers = {**self._headers, "content-type": "application/json"}
        return Request("POST", path, path, headers, body, 1)

    # --- what to do with what came back ------------------------------------------------------------

    def step(
        self, request: Request, attempt: int, outcome: Response | TransportError, started: float, defer: bool = False
    ) -> Done | Retry:
        """The decoded body (`defer`: a 2xx body as a `Deferred`), or how long to wait before the next
        attempt; raises on a final failure."""
        last = attempt >= request.attempts - 1
        if isinstance(outcome, TransportError):
            self._trace(request, "timeout" if outcome.kind == "timeout" else "connection error", started)
            if last:
                raise self.transport_error(request, outcome)
            delay = self._retry.delay(attempt, None)
        else:
            self._trace(request, str(outcome.status), started)
            if outcome.status not in RETRY_STATUSES or last:
                bare_text = request.method == "POST"
                if defer and 200 <= outcome.status < 300:
                    answer = outcome
                    return Done(None, Deferred(answer.content, lambda: self.decode(answer, bare_text=bare_text)))
                return Done(self.decode(outcome, bare_text=bare_text))
            delay = self._retry.delay(attempt, parse_retry_after(outcome.headers.get("retry-after")))
        if self._log:
            self._log(f"retrying in {delay:.2f}s (attempt {attempt + 2} of {request.attempts})")
        return Retry(delay)

    def transport_error(self, request: Request, error: TransportError) -> NetworkError:
        if error.kind == "timeout":
            message = f"{request.method} {request.path}: the service did not answer within the timeout"
        elif error.kind == "proxy":
            message = str(error)
        else:
            message = f"cannot reach the service at {self.shown_url}: {error}"
        return NetworkError(message, kind=f"network.{error.kind}")

    def decode(self, response: Response, *, bare_text: bool = False) -> JSON:
        """The JSON body; with `bare_text`, a body of bare base64 text (a `/tx` answer seen in use) as a string."""
        status = response.status
        if 200 <= status < 300:
            try:
                body: JSON = exact_json.loads(response.content)
            except (ValueError, UnicodeDecodeError):
                text = response.content.strip()
                if bare_text and _BARE_BASE64.fullmatch(text):
                    return text.decode("ascii")
                raise ServiceError(
                    f"the service answered HTTP {status} with a body that is not JSON ({_describe_body(response)})",
                    status=status,
                    kind="service.body",
                ) from None
            return body
        raise self.status_error(response)

    def status_error(self, response: Response) -> YieldError:
        status = response.status
        message = _error_message(response)
        if message:  # a service may echo the path it was asked for (the base URL's path may hold a key), or the key
            message = self.scrubbed(message)
        if status in (401, 403) or message in AUTH_MESSAGES:
            missing = message == MISSING_KEY_MESSAGE or (not self._has_key and status == 401)
            return AuthError(
                message or f"the service refused the request (HTTP {status})",
                kind="auth.missing_key" if missing else "auth.rejected",
            )
        if 300 <= status < 400:
            where = response.headers.get("location", "?")
            return ServiceError(
                f"the service redirected to {where} (HTTP {status}); not followed, so the API key stays here",
                status=status,
                kind="service.redirect",
            )
        return ServiceError(
            message or f"the service answered HTTP {status} ({_describe_body(response)})",
            status=status,
            kind="service.status",
        )

    def scrubbed(self, text: str) -> str:
        """`text` without the base URL's secret parts or the API key, in any form it may be echoed in."""
        return scrub(text, self.base_url, self._headers.get("x-api-key"))

    def _trace(self, request: Request, status: str, started: float) -> None:
        if self._log is None:
            return
        elapsed = (time.perf_counter() - started) * 1000
        key = f"x-api-key: {self._key_shown}" if self._has_key else "no x-api-key"
        self._log(f"{request.method} {self.shown_url}{request.target} ({key}) -> {status} in {elapsed:.0f} ms")


class ServiceBase(Endpoints, Generic[A]):
    """What both service clients are, whatever moves their bytes: one method per row of the endpoint
    table (`yieldcli.api.endpoints`), and `serve`, `get`, `post` made into requests here and sent by
    the client's `_send` (blocking, or a coroutine: `A`). Raises `yieldcli.errors` (AuthError,
    ServiceError, NetworkError). With a `transport` (`yieldcli.api.seam`), that is what moves the
    bytes, and every request goes through it.

    Redirects are never followed: one would carry x-api-key to wherever it points.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        timeout: float = 30.0,
        log: Log | None = None,
        retry: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], Any] | None = None,
        max_connections: int = 64,
        max_idle: int = MAX_IDLE,
        transport: Transport | AsyncTransport | None = None,
    ):
        """`sleep`: how to wait between attempts (None: the client's own: time.sleep, asyncio.sleep);
        `transport`: what moves the bytes instead of the client's own (the pool's limits are then its)."""
        self._core = ClientCore(base_url, api_key, retry=retry, log=log)
        self.base_url = self._core.base_url
        self._sleep = sleep
        self._open(timeout, max_connections, max_idle, transport)

    def _open(
        self, timeout: float, max_connections: int, max_idle: int, transport: Transport | AsyncTransport | None
    ) -> None:
        raise NotImplementedError  # the client's transport, or the one it was given

    def _send(self, request: Request) -> A:
        raise NotImplementedError  # the client's exchange, retried by the rules of `ClientCore.step`

    def serve(self, endpoint: Endpoint, /, *arguments: Any, **query: Any) -> A:
        """A row of the endpoint table, asked with these arguments (`api.positions(...)` calls this)."""
        return self._send(self._core.request(endpoint, arguments, query))

    def get(self, path: str, query: Query | None = None) -> A:
        return self._send(self._core.get(path, query))

    def post(self, path: str, params: Mapping[str, Any]) -> A:
        """Never retried: a repeated deposit request is not harmless to guess about."""
        return self._send(self._core.post(path, params))


def _parsable(url: str) -> str:
    """Refuse what the URL parser or http.client would choke on later, as bad input rather than a crash."""
    shown = re.sub(r"//[^/@]*@", "//****@", url)  # credentials in a URL are never repeated back
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise UsageError(f"invalid API URL {shown!r}: it contains spaces or control characters", kind="usage.url")
    try:
        _ = urlsplit(url).port  # reading the port is what raises on a bad one
    except ValueError as exc:
        raise UsageError(f"invalid API URL {shown!r}: {str(exc).lower()}", kind="usage.url") from None
    return url


def parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


_BARE_BASE64 = re.compile(rb"[A-Za-z0-9+/]{16,}={0,2}")


def _error_message(response: Response) -> str | None:
    """The service's `{"message": ...}`, its plain-text JSON string, or None when unreadable."""
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        text = response.text.strip() if response.headers.get("content-type", "").startswith("text/plain") else ""
        return text[:300] if text and not text.lstrip().startswith("<") else None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    if isinstance(body, str):
        return body
    return None


def _describe_body(response: Response) -> str:
    content_type = response.headers.get("content-type", "no content type").split(";")[0]
    if not response.content:
        return "empty body"
    if "html" in content_type or response.content.lstrip()[:1] == b"<":
        return "an HTML page"
    return f"{len(response.content)} bytes of {content_type}"
