"""The service's client: one method per endpoint, retries, and one place that maps answers to errors."""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Mapping, NamedTuple
from urllib.parse import quote, urlencode

from yieldcli import __version__
from yieldcli.api.transport import Response, Transport, TransportError, TransportTimeout
from yieldcli.errors import AuthError, NetworkError, ServiceError
from yieldcli.urls import check_base_url, redact_url, scrub

AUTH_MESSAGES = ("Missing credentials", "API key invalid or doesn't exist")
AUTH_HINT = "run `yield auth login` or set YIELD_API_KEY"
RETRY_STATUSES = frozenset({429, 502, 503, 504})


class RetryPolicy(NamedTuple):
    """Bounded exponential backoff with full jitter; `Retry-After` wins when the service sends it."""

    attempts: int = 4
    base_delay: float = 0.25
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        import random

        return random.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))


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


class ApiClient:
    """The service's endpoints. Library code: returns decoded JSON, raises `yieldcli.errors`."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        timeout: float = 30.0,
        log: Callable[[str], None] | None = None,
        retry: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], None] = time.sleep,
        max_connections: int = 64,
    ):
        self.base_url = check_base_url(base_url)
        # What errors and --verbose show: the URL may carry credentials (user:password@, ?api_key=).
        self.shown_url = redact_url(self.base_url)
        self._api_key = api_key
        self._log = log
        self._retry = retry
        self._sleep = sleep
        self._headers = {"user-agent": f"yield/{__version__}", "accept": "application/json"}
        if api_key:
            self._headers["x-api-key"] = api_key
        # Redirects are never followed: one would carry x-api-key to wherever it points.
        self._http = Transport(self.base_url, timeout=timeout, max_connections=max_connections)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "ApiClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- endpoints -----------------------------------------------------------------------------

    def health(self) -> Any:
        return self.get("/health")

    def strategy_info(self, strategy_id: str) -> Any:
        return self.get(f"/strategy-info/{_segment(strategy_id)}")

    def positions(self, wallet: str, strategy_id: str, **query: Any) -> Any:
        return self.get(f"/breeze-balances/{_segment(wallet)}", {"strategy_id": strategy_id, **query})

    def balances(self, wallet: str, **query: Any) -> Any:
        return self.get(f"/user-balances/{_segment(wallet)}", query)

    def earnings(self, wallet: str, **query: Any) -> Any:
        return self.get(f"/user-yield/{_segment(wallet)}", query)

    def post(self, path: str, params: Mapping[str, Any]) -> Any:
        """POST `{"params": ...}`. Never retried: a repeated deposit request is not harmless to guess about."""
        body = {"params": {k: v for k, v in params.items() if v is not None}}
        return self._request("POST", path, json_body=body, retry=False)

    # --- transport -----------------------------------------------------------------------------

    def get(self, path: str, query: Mapping[str, Any] | None = None) -> Any:
        params = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        return self._request("GET", path, params=params, retry=True)

    def _request(self, method: str, path: str, *, params=None, json_body=None, retry: bool) -> Any:
        attempts = self._retry.attempts if retry else 1
        target = path + (f"?{urlencode(params)}" if params else "")
        headers = dict(self._headers)
        body = None
        if json_body is not None:
            body = json.dumps(json_body).encode()
            headers["content-type"] = "application/json"
        for attempt in range(attempts):
            started = time.perf_counter()
            try:
                response = self._http.request(method, target, headers, body)
            except TransportTimeout:
                error = NetworkError(
                    f"{method} {path}: the service did not answer within the timeout",
                    hint="check the network or raise --timeout",
                )
                self._trace(method, path, params, "timeout", started)
            except TransportError as exc:
                error = NetworkError(
                    f"cannot reach the service at {self.shown_url}: {exc}",
                    hint="check --api-url and the network",
                )
                self._trace(method, path, params, "connection error", started)
            else:
                self._trace(method, path, params, str(response.status), started)
                if response.status not in RETRY_STATUSES or attempt == attempts - 1:
                    return self._decode(response)
                error = None
                delay = self._retry.delay(attempt, parse_retry_after(response.headers.get("retry-after")))
            if error is not None:
                if attempt == attempts - 1:
                    raise error
                delay = self._retry.delay(attempt, None)
            if self._log:
                self._log(f"retrying in {delay:.2f}s (attempt {attempt + 2} of {attempts})")
            self._sleep(delay)
        raise AssertionError("unreachable")  # the loop returns or raises on its last attempt

    def _trace(self, method: str, path: str, params: Mapping[str, Any] | None, status: str, started: float) -> None:
        if self._log is None:
            return
        url = f"{self.shown_url}{path}" + (f"?{urlencode(params)}" if params else "")
        elapsed = (time.perf_counter() - started) * 1000
        key = "x-api-key: ****" if self._api_key else "no x-api-key"
        self._log(f"{method} {url} ({key}) -> {status} in {elapsed:.0f} ms")

    def _decode(self, response: Response) -> Any:
        status = response.status
        if 200 <= status < 300:
            try:
                return json.loads(response.content)
            except (ValueError, UnicodeDecodeError):
                raise ServiceError(
                    f"the service answered HTTP {status} with a body that is not JSON ({_describe_body(response)})",
                    status=status,
                ) from None
        message = _error_message(response)
        if message:  # a service may echo the path it was asked for, and the base URL's path may hold a key
            message = scrub(message, self.base_url)
        if status in (401, 403) or message in AUTH_MESSAGES:
            raise AuthError(message or f"the service refused the request (HTTP {status})", hint=AUTH_HINT)
        if 300 <= status < 400:
            where = response.headers.get("location", "?")
            raise ServiceError(
                f"the service redirected to {where} (HTTP {status}); not followed, so the API key stays here",
                status=status,
                hint="point --api-url at the final address",
            )
        raise ServiceError(message or f"the service answered HTTP {status} ({_describe_body(response)})", status=status)


def _segment(value: str) -> str:
    return quote(value, safe="")


def _query_value(value: Any) -> Any:
    return str(value).lower() if isinstance(value, bool) else value


def _error_message(response: Response) -> str | None:
    """The service's `{"message": ...}`, its plain-text JSON string, or None when unreadable."""
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        text = response.text.strip() if _looks_textual(response) else ""
        return text[:300] if text and not text.lstrip().startswith("<") else None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    if isinstance(body, str):
        return body
    return None


def _looks_textual(response: Response) -> bool:
    return response.headers.get("content-type", "").startswith("text/plain")


def _describe_body(response: Response) -> str:
    content_type = response.headers.get("content-type", "no content type").split(";")[0]
    if not response.content:
        return "empty body"
    if "html" in content_type or response.content.lstrip()[:1] == b"<":
        return "an HTML page"
    return f"{len(response.content)} bytes of {content_type}"
