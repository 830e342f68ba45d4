"""The service's endpoints for asyncio, on httpx2: the same requests, retries and errors as the sync client.

httpx2 costs about 150 ms to import and set up, which the command line cannot afford on every run
(see `yieldcli.api.transport`); a long-running async program pays it once. It reads the proxy
environment itself, with the same rules `yieldcli.api.proxy` follows, and verifies TLS with the
same context as the sync client.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from yieldcli.api.closing import AsyncCloses
from yieldcli.api.core import JSON, Done, Request, ServiceBase
from yieldcli.api.proxy import Proxy, proxy_for
from yieldcli.api.seam import Handed
from yieldcli.api.tls import client_context
from yieldcli.api.transport import Response, TransportError, TransportTimeout

if TYPE_CHECKING:
    import httpx2

    from yieldcli.api.seam import AsyncTransport, Transport


class AsyncServiceClient(ServiceBase[Awaitable[JSON]], AsyncCloses):
    """The service client on httpx2, for asyncio: each request a coroutine. Given a transport
    (`yieldcli.api.seam`), every request goes through it instead, and httpx2 is not loaded."""

    _http: httpx2.AsyncClient
    _handed: Handed | None = None

    def _open(
        self, timeout: float, max_connections: int, max_idle: int, transport: Transport | AsyncTransport | None
    ) -> None:
        if transport is not None:
            self._handed = Handed(transport, self._core, timeout, blocking=False)
            return
        import httpx2

        parts = urlsplit(self.base_url)
        self._proxy = proxy_for(parts.scheme, parts.hostname or "", parts.port)
        # Redirects are never followed (httpx2's default, stated): one would carry x-api-key away.
        self._http = httpx2.AsyncClient(
            timeout=timeout,
            follow_redirects=False,
            verify=client_context(),
            limits=httpx2.Limits(max_connections=max_connections, max_keepalive_connections=max_idle),
        )

    async def aclose(self) -> None:
        if self._handed is not None:
            await self._handed.aclose()
            return
        await self._http.aclose()

    async def _send(self, request: Request) -> JSON:
        import asyncio

        for attempt in range(request.attempts):
            started = time.perf_counter()
            outcome = await self._exchange(request)
            step = self._core.step(request, attempt, outcome, started)
            if isinstance(step, Done):
                return step.body
            await (self._sleep or asyncio.sleep)(step.delay)
        raise AssertionError("unreachable")  # the last attempt returns or raises

    async def _exchange(self, request: Request) -> Response | TransportError:
        if self._handed is not None:
            try:
                return await self._handed.request_async(request.method, request.target, request.headers, request.body)
            except TransportError as exc:
                return exc
        import httpx2

        try:
            answer = await self._http.request(
                request.method, self.base_url + request.target, headers=request.headers, content=request.body
            )
        except httpx2.TimeoutException:
            return TransportTimeout()
        except httpx2.TransportError as exc:
            return _transport_error(exc, self._proxy, urlsplit(self.base_url).hostname or "")
        return Response(answer.status_code, {k.lower(): v for k, v in answer.headers.items()}, answer.content)


def _transport_error(exc: httpx2.TransportError, proxy: Proxy | None, host: str) -> TransportError:
    """The sync transport's words for the same failures (httpx2 wraps ssl and socket errors in its own)."""
    import httpx2

    text = str(exc) or type(exc).__name__
    if proxy is not None and isinstance(exc, httpx2.ProxyError):
        return TransportError(f"the proxy {proxy.url} refused to connect to {host}: {text}", "proxy")
    if "SSL" in text or "CERTIFICATE" in text:
        return TransportError(f"TLS with {host} failed: {text}", "tls")
    if proxy is not None and isinstance(exc, httpx2.ConnectError):
        # Through a proxy the only connection we open is to the proxy; the target's failures come back
        # from the proxy as a refused CONNECT (ProxyError, above).
        return TransportError(f"cannot reach the proxy {proxy.url}: {text}", "proxy")
    return TransportError(text)
