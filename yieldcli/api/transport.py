"""HTTP/1.1 with keep-alive over the standard library: what the service client needs, and nothing more.

Why not httpx: importing httpx (with httpcore and h2) costs about 80 ms, more than half of a cold
`yield strategy info`, and building its client loads the CA bundle even for plain http. The client
needs only GET and POST with timeouts, TLS, a thread-safe connection pool and HTTPS proxies.
"""

from __future__ import annotations

import http.client
import os
import queue
import socket
import threading
from typing import NamedTuple
from urllib.parse import urlsplit


class TransportError(Exception):
    """The request did not complete: refused, reset, TLS, DNS."""


class TransportTimeout(TransportError):
    """No answer within the timeout."""


class Response(NamedTuple):
    status: int
    headers: dict[str, str]  # lower-case names
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


# Errors a kept-alive connection gives when the server closed it while idle: retrying an idempotent
# request on a fresh connection is safe, and that is what browsers and httpx do too.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.BadStatusLine)


class Transport:
    def __init__(self, base_url: str, *, timeout: float, max_connections: int = 64):
        parts = urlsplit(base_url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._timeout = timeout
        self._idle: queue.LifoQueue[http.client.HTTPConnection] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(max_connections)
        self._ssl_context = None
        self._proxy = _proxy_for(self._host, self._https)

    def request(self, method: str, target: str, headers: dict[str, str], body: bytes | None = None) -> Response:
        """`target` is the path and query; a stale kept-alive connection is retried once for GET."""
        with self._slots:
            for attempt in (0, 1):
                connection, reused = self._connection()
                try:
                    connection.request(method, self._prefix + target, body=body, headers=headers)
                    raw = connection.getresponse()
                    response = Response(raw.status, {k.lower(): v for k, v in raw.getheaders()}, raw.read())
                except socket.timeout:
                    connection.close()
                    raise TransportTimeout("timed out") from None
                except _STALE as exc:
                    connection.close()
                    if reused and attempt == 0 and method == "GET":
                        continue
                    raise TransportError(_reason(exc)) from None
                except (OSError, http.client.HTTPException) as exc:
                    connection.close()
                    raise TransportError(_reason(exc)) from None
                if raw.will_close:
                    connection.close()
                else:
                    self._idle.put(connection)
                return response
        raise AssertionError("unreachable")

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        try:
            return self._idle.get_nowait(), True
        except queue.Empty:
            pass
        target_host, target_port = self._proxy or (self._host, self._port)
        if self._https:
            if self._ssl_context is None:
                import ssl

                self._ssl_context = ssl.create_default_context()
            connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                target_host, target_port, timeout=self._timeout, context=self._ssl_context)
        else:
            connection = http.client.HTTPConnection(target_host, target_port, timeout=self._timeout)
        if self._proxy:
            connection.set_tunnel(self._host, self._port)
        return connection, False


def _proxy_for(host: str, https: bool) -> tuple[str, int] | None:
    """HTTPS_PROXY / NO_PROXY, as curl reads them (https targets only: plain http is loopback-only)."""
    if not https:
        return None
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    if not proxy:
        return None
    no_proxy = os.environ.get("NO_PROXY") or os.environ.get("no_proxy") or ""
    for entry in (e.strip().lstrip(".") for e in no_proxy.split(",")):
        if entry == "*" or (entry and (host == entry or host.endswith("." + entry))):
            return None
    parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return (parts.hostname or "", parts.port or 8080) if parts.hostname else None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return "host not found"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    text = str(exc).strip()
    return text or type(exc).__name__
