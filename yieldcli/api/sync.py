"""The service's endpoints, synchronously, on the standard-library transport: decoded JSON bodies."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from yieldcli.api.core import JSON, ClientCore, Done, Log, Query, Request, RetryPolicy
from yieldcli.api.endpoints import Endpoint, Endpoints
from yieldcli.api.limits import MAX_IDLE
from yieldcli.api.transport import Response, Transport, TransportError
from yieldcli.concurrency import ordered_map


class ServiceClient(Endpoints):
    """One method per row of the endpoint table (`yieldcli.api.endpoints`);
    raises `yieldcli.errors` (AuthError, ServiceError, NetworkError).

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
        sleep: Callable[[float], None] = time.sleep,
        max_connections: int = 64,
        max_idle: int = MAX_IDLE,
    ):
        self._core = ClientCore(base_url, api_key, retry=retry, log=log)
        self.base_url = self._core.base_url
        self._sleep = sleep
        try:
            self._http = Transport(self.base_url, timeout=timeout, max_connections=max_connections, max_idle=max_idle)
        except TransportError as exc:
            raise self._core.transport_error(self._core.request(Endpoints.health), exc) from None

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def serve(self, endpoint: Endpoint, /, *arguments: Any, **query: Any) -> JSON:
        """A row of the endpoint table, asked with these arguments (`api.positions(...)` calls this)."""
        return self._send(self._core.request(endpoint, arguments, query))

    def get(self, path: str, query: Query | None = None) -> JSON:
        return self._send(self._core.get(path, query))

    def post(self, path: str, params: Mapping[str, Any]) -> JSON:
        """Never retried: a repeated deposit request is not harmless to guess about."""
        return self._send(self._core.post(path, params))

    def serve_each(
        self, endpoint: Endpoint, calls: Iterable[tuple[tuple[Any, ...], Query]], window: int
    ) -> Iterator[JSON]:
        """`serve(endpoint, *arguments, **query)` for each (arguments, query), in order, with at most
        `window` requests in flight: pages of a listing. Each request's first attempt goes out with
        the others from one thread (`yieldcli.api.fanout`); retries follow the same rules as `serve`."""
        requests = (self._core.request(endpoint, arguments, query) for arguments, query in calls)
        if endpoint.method != "GET" or self._http.tunnels():
            for _, future in ordered_map(self._send, requests, window, "request"):
                yield future.result()
            return

        from yieldcli.api.fanout import exchange_all

        sent: deque[tuple[Request, float]] = deque()

        def targets() -> Iterator[str]:
            for request in requests:
                sent.append((request, time.perf_counter()))
                yield request.target

        for outcome, known in exchange_all(self._http, targets(), self._core.read_headers(), window):
            request, started = sent.popleft()
            yield self._send(request, (outcome, started, known))

    def _send(self, request: Request, first: tuple[Response | TransportError, float, float] | None = None) -> JSON:
        """The request's decoded answer, retried by the rules of `ClientCore.step`. `first`: the outcome
        of an attempt already made, when it started (perf_counter) and when it was known (monotonic):
        the wait before the next attempt counts from then, so pages answered 429 together are retried
        together after their Retry-After, not one wait after another as they are read."""
        for attempt in range(request.attempts):
            outcome: Response | TransportError
            known = None
            if attempt == 0 and first is not None:
                outcome, started, known = first
            else:
                started = time.perf_counter()
                try:
                    outcome = self._http.request(request.method, request.target, request.headers, request.body)
                except TransportError as exc:
                    outcome = exc
            step = self._core.step(request, attempt, outcome, started)
            if isinstance(step, Done):
                return step.body
            self._sleep(step.delay if known is None else max(0.0, known + step.delay - time.monotonic()))
        raise AssertionError("unreachable")  # the last attempt returns or raises
