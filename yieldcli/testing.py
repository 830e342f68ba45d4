"""Testing code that uses `Client` or `AsyncClient` with no service: a transport that answers with a function.

    from yieldcli import Client
    from yieldcli.testing import MockTransport, Request, Response

    def service(request: Request) -> Response:
        if request.path == "/health":
            return Response(200, json="OK")
        return Response(404, json={"message": f"no route {request.path}"})

    with Client(api_key="test-key", transport=MockTransport(service)) as client:
        assert client.health() == "OK"

As `httpx.MockTransport` does for `httpx.Client`: the client is the real one (its requests, the
x-api-key header, retries, errors, every page of `iter_*` and of `page_result(every=True)`), only
the bytes come from `handler`. To fail a request as the network would, the handler raises what a
socket raises (`ConnectionRefusedError`, `TimeoutError`, `ssl.SSLError`) or a `TransportError` with
its `kind` ("unreachable", "timeout", "tls", "proxy"): the client raises `NetworkError` with the kind
`network.<kind>`, after retrying a read as it would.

Any object with `handle_request(request) -> Response` (`Transport`) is a transport for `Client`,
and with `async handle_async_request(request)` (`AsyncTransport`) for `AsyncClient`.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable

from yieldcli.api.seam import AsyncTransport, Request, Response, Transport
from yieldcli.api.transport import TransportError

__all__ = ["AsyncTransport", "MockTransport", "Request", "Response", "Transport", "TransportError"]

Handler = Callable[[Request], Response | Awaitable[Response]]


class MockTransport:
    """A transport for `Client` and `AsyncClient` whose answers are `handler(request)`.

    For `AsyncClient` the handler may be an `async def`. `Client` calls it one request at a time
    (never twice at once, even when it reads many wallets from several threads); `AsyncClient` calls
    it from its event loop, the pages of `iter_*` interleaved as they are asked.
    """

    def __init__(self, handler: Handler):
        self.handler = handler
        self._one_at_a_time = threading.Lock()

    def handle_request(self, request: Request) -> Response:
        with self._one_at_a_time:
            answer = self.handler(request)
        if isinstance(answer, Awaitable):
            _discard(answer)
            raise TypeError("the handler is a coroutine function: an async handler answers AsyncClient only")
        return answer

    async def handle_async_request(self, request: Request) -> Response:
        answer = self.handler(request)
        if isinstance(answer, Awaitable):
            return await answer
        return answer

    def close(self) -> None:
        """Nothing to close: here so a caller's transport can be swapped for this one."""

    async def aclose(self) -> None:
        """Nothing to close."""

    def __repr__(self) -> str:
        return f"MockTransport({getattr(self.handler, '__qualname__', self.handler)!r})"


def _discard(awaitable: Awaitable[Response]) -> None:
    close = getattr(awaitable, "close", None)  # a coroutine never awaited warns when collected: closed instead
    if callable(close):
        close()
