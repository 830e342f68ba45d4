"""The service's endpoints, synchronously, on the standard-library transport (or one the caller gives:
`yieldcli.api.seam`): decoded JSON bodies."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from yieldcli import exact_json
from yieldcli.api.closing import Closes
from yieldcli.api.core import JSON, Done, Query, Request, ServiceBase
from yieldcli.api.endpoints import Endpoint, Endpoints
from yieldcli.api.transport import Response, Transport, TransportError
from yieldcli.concurrency import ordered_map

if TYPE_CHECKING:
    from yieldcli.api.seam import AsyncTransport, Handed
    from yieldcli.api.seam import Transport as Given


class ServiceClient(ServiceBase[JSON], Closes):
    """The service client on the standard library's `http.client` (`yieldcli.api.transport`), or on
    the transport it is given (`yieldcli.api.seam`)."""

    _http: Transport | Handed

    def _open(
        self, timeout: float, max_connections: int, max_idle: int, transport: Given | AsyncTransport | None
    ) -> None:
        if transport is not None:
            from yieldcli.api.seam import Handed

            self._http = Handed(transport, self._core, timeout, blocking=True)
            return
        try:
            self._http = Transport(self.base_url, timeout=timeout, max_connections=max_connections, max_idle=max_idle)
        except TransportError as exc:
            raise self._core.transport_error(self._core.request(Endpoints.health), exc) from None

    def close(self) -> None:
        self._http.close()

    def serve_each(
        self,
        endpoint: Endpoint,
        calls: Iterable[tuple[tuple[Any, ...], Query] | None],
        window: int,
        *,
        deferred: bool = False,
    ) -> Iterator[Any]:
        """`serve(endpoint, *arguments, **query)` for each (arguments, query), in order, with at most
        `window` requests in flight: pages of a listing. Each request's first attempt goes out with
        the others from one thread (`yieldcli.api.fanout`); retries follow the same rules as `serve`.

        A None among the calls asks nothing more until the caller has read an answer: what follows
        may depend on it (the pages after the first two, once the first says how many there are).
        Through a transport the caller gave, the requests go one at a time, in order, from this thread.
        `deferred`: the answers the fan-out reads come as `page_text.Deferred` (their bytes, decoded when
        asked), the others decoded as ever: a reader of the bytes takes either."""
        requests = (None if call is None else self._core.request(endpoint, *call) for call in calls)
        if not isinstance(self._http, Transport):  # the caller's transport
            yield from (self._send(request) for request in requests if request is not None)
            return
        if endpoint.method != "GET" or self._http.tunnels():
            yield from self._each_on_threads(requests, window)
            return

        from yieldcli.api.fanout import exchange_all

        sent: deque[tuple[Request, float]] = deque()

        def targets() -> Iterator[str | None]:
            for request in requests:
                if request is not None:
                    sent.append((request, time.perf_counter()))
                yield None if request is None else request.target

        # While the first answers travel, what decoding them needs is made ready (msgspec, ~8 ms).
        ready = exact_json.make_ready
        for outcome, known in exchange_all(self._http, targets(), self._core.read_headers(), window, ready):
            request, started = sent.popleft()
            yield self._send(request, (outcome, started, known), deferred)

    def _each_on_threads(self, requests: Iterator[Request | None], window: int) -> Iterator[JSON]:
        """`serve_each` a request a thread (through a proxy's tunnel, or not a GET): the requests up to
        a None go out together, and the ones after it once those before it have been read."""
        ended = False
        read = True  # an answer was read since the last pause

        def until_a_pause() -> Iterator[Request]:
            nonlocal ended
            for request in requests:
                if request is None:
                    return
                yield request
            ended = True

        while not ended:
            if not read:
                raise RuntimeError("asked to wait for an answer with no request in flight")
            read = False
            for _, future in ordered_map(self._send, until_a_pause(), window, "request"):
                read = True
                yield future.result()

    def _send(
        self, request: Request, first: tuple[Response | TransportError, float, float] | None = None, defer: bool = False
    ) -> Any:
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
            step = self._core.step(request, attempt, outcome, started, defer)
            if isinstance(step, Done):
                return step.body if step.deferred is None else step.deferred
            (self._sleep or time.sleep)(
                step.delay if known is None else max(0.0, known + step.delay - time.monotonic())
            )
        raise AssertionError("unreachable")  # the last attempt returns or raises
