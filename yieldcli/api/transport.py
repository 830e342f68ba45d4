"""HTTP/1.1 with keep-alive over the standard library's `http.client`, on purpose.

Start-up time decides it. Measured on a cold process (median of 15 interleaved pairs), a
`yield strategy info` took 294 ms with the service client on httpx2 and 148 ms on `http.client`:
importing httpx2 costs 70-100 ms, and its first client 35-90 ms more (httpcore2 and an SSL
context), against about 35 ms for `http.client` and `ssl`. On httpx2 a read would be slower than
the official TypeScript SDK in node. The asynchronous client, for long-running processes where
start-up does not count, runs on httpx2 (`yieldcli.api.aio`).

What httpx2 would have given is done here so both stacks read the environment the same way:
proxies from the environment with httpx2's rules (`yieldcli.api.proxy`: a CONNECT tunnel for
https, absolute-form requests for http, credentials in the proxy URL sent as
`Proxy-Authorization`), the OS trust store with `SSL_CERT_FILE` honoured (`yieldcli.api.tls`),
a bounded pool (at most `max_connections` in use, at most `max_idle` kept alive), and no redirects.
"""

from __future__ import annotations

import queue
import select
import socket
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlsplit

from yieldcli.api.limits import MAX_IDLE
from yieldcli.api.proxy import Proxy, proxy_for

if TYPE_CHECKING:
    import http.client
    import ssl


class TransportError(Exception):
    """The request did not complete. `kind`: unreachable, timeout, tls or proxy."""

    def __init__(self, message: str, kind: str = "unreachable"):
        super().__init__(message)
        self.kind = kind


class TransportTimeout(TransportError):
    """No answer within the timeout."""

    def __init__(self, message: str = "timed out"):
        super().__init__(message, "timeout")


class Response(NamedTuple):
    status: int
    headers: dict[str, str]  # lower-case names
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


# `http.client` (with the email package it parses headers with) and `ssl` are imported by the first
# request that needs them, not with this module: every page of a listing goes through the fan-out
# (`yieldcli.api.fanout`), which needs neither for an http:// service; ~12 ms of its start.


class Transport:
    def __init__(self, base_url: str, *, timeout: float, max_connections: int = 64, max_idle: int = MAX_IDLE):
        parts = urlsplit(base_url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        self._origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        self._prefix = parts.path.rstrip("/")
        self._timeout = timeout
        # More idle connections than this are closed rather than kept: a burst of concurrent pages
        # must not leave dozens of sockets open for the rest of a long-running process.
        self._idle: queue.LifoQueue[http.client.HTTPConnection] = queue.LifoQueue(maxsize=max(1, max_idle))
        self._slots = threading.BoundedSemaphore(max_connections)
        self._ssl_context: ssl.SSLContext | None = None
        self._proxy = proxy_for(parts.scheme, self._host, parts.port)
        if self._proxy is not None and self._proxy.scheme != "http":
            raise TransportError(
                f"the proxy {self._proxy.url} uses {self._proxy.scheme}://, which this client does not speak "
                "(only http:// proxies)",
                "proxy",
            )

    @property
    def proxy(self) -> Proxy | None:
        return self._proxy

    @property
    def https(self) -> bool:
        return self._https

    @property
    def host(self) -> str:
        return self._host

    @property
    def timeout(self) -> float:
        return self._timeout

    def tls_context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            from yieldcli.api.tls import client_context

            self._ssl_context = client_context()
        return self._ssl_context

    def wire(self, headers: dict[str, str]) -> tuple[Callable[[str], str], dict[str, str], tuple[str, int]]:
        """For a client of its own (`yieldcli.api.fanout`): what a target is sent as, the headers with
        the ones `http.client` adds, and the host and port to connect to. Not for https through a
        proxy, which needs a CONNECT tunnel (`tunnels`)."""
        default = 443 if self._https else 80
        host = f"[{self._host}]" if ":" in self._host else self._host
        wire_headers = {"host": host if self._port == default else f"{host}:{self._port}", **headers}
        wire_headers.setdefault("accept-encoding", "identity")
        if self._proxy is None:
            return (lambda target: self._prefix + target), wire_headers, (self._host, self._port)
        if self._proxy.authorization:
            wire_headers["proxy-authorization"] = self._proxy.authorization
        return (lambda target: self._origin + self._prefix + target), wire_headers, (self._proxy.host, self._proxy.port)

    def tunnels(self) -> bool:
        """https through a proxy: connections go through a CONNECT tunnel."""
        return self._proxy is not None and self._https

    def request(self, method: str, target: str, headers: dict[str, str], body: bytes | None = None) -> Response:
        """`target` is the path and query; a stale kept-alive connection is retried once for GET."""
        import http.client

        # Errors a kept-alive connection gives when the server closed it while idle (RemoteDisconnected
        # is a ConnectionResetError): retrying an idempotent request on a fresh connection is safe, and
        # that is what browsers and httpx do too.
        stale = (ConnectionResetError, BrokenPipeError, http.client.BadStatusLine)
        with self._slots:
            for attempt in (0, 1):
                connection, reused = self._connection()
                try:
                    response = self._exchange(connection, method, target, headers, body)
                except stale as exc:
                    connection.close()
                    if reused and attempt == 0 and method == "GET":
                        continue
                    raise self.error(exc) from None
                except (OSError, http.client.HTTPException) as exc:
                    connection.close()
                    raise self.error(exc) from None
                return response
        raise AssertionError("unreachable")

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    def _exchange(
        self,
        connection: http.client.HTTPConnection,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes | None,
    ) -> Response:
        path = self._prefix + target
        if self._proxy is not None and not self._https:
            # A forwarding proxy takes the absolute URL, and its credentials on every request.
            path = self._origin + path
            if self._proxy.authorization:
                headers = {**headers, "proxy-authorization": self._proxy.authorization}
        connection.request(method, path, body=body, headers=headers)
        raw = connection.getresponse()
        response = Response(raw.status, {k.lower(): v for k, v in raw.getheaders()}, raw.read())
        if raw.will_close:
            connection.close()
        else:
            try:
                self._idle.put_nowait(connection)
            except queue.Full:
                connection.close()
        if self._proxy is not None and not self._https and response.status == 407:
            raise TransportError(
                f"the proxy {self._proxy.url} refused the request: 407 Proxy Authentication Required", "proxy"
            )
        return response

    def _connection(self) -> tuple[http.client.HTTPConnection, bool]:
        import http.client

        while True:  # a kept one the server closed while it sat idle is dropped here, before any request
            try:
                kept = self._idle.get_nowait()
            except queue.Empty:
                break
            if not _dropped(kept):
                return kept, True
            kept.close()
        host, port = (self._proxy.host, self._proxy.port) if self._proxy else (self._host, self._port)
        if self._https:
            connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                host, port, timeout=self._timeout, context=self.tls_context()
            )
            if self._proxy:
                tunnel_headers = (
                    {"Proxy-Authorization": self._proxy.authorization} if self._proxy.authorization else None
                )
                connection.set_tunnel(self._host, self._port, headers=tunnel_headers)
        else:
            connection = http.client.HTTPConnection(host, port, timeout=self._timeout)
        return connection, False

    def error(self, exc: BaseException) -> TransportError:
        """Say which hop failed: the proxy, TLS with the service, or the service itself."""
        if self._proxy is not None and not isinstance(exc, socket.timeout):
            if str(exc).startswith("Tunnel connection failed"):
                answer = str(exc).partition(": ")[2]
                return TransportError(
                    f"the proxy {self._proxy.url} refused to connect to {self._host}:{self._port}: {answer}", "proxy"
                )
            if isinstance(exc, (ConnectionRefusedError, socket.gaierror)):
                return TransportError(f"cannot reach the proxy {self._proxy.url}: {_reason(exc)}", "proxy")
        return network_error(exc, self._host)


def network_error(exc: BaseException, host: str) -> TransportError:
    """What a socket's failure means, with no proxy on the way: a timeout, TLS with `host`, or no answer."""
    if isinstance(exc, socket.timeout):
        return TransportTimeout()
    reason = _reason(exc)
    tls = sys.modules.get("ssl")  # an error can be one of its kinds only if something used TLS
    if tls is not None and isinstance(exc, tls.SSLError):
        return TransportError(f"TLS with {host} failed: {reason}", "tls")
    return TransportError(reason)


def _dropped(connection: http.client.HTTPConnection) -> bool:
    """Whether the server closed a kept-alive connection while it sat idle: an idle socket that reads
    as ready has nothing to say but its end (as urllib3 checks). Found before the request is written,
    so a POST, which is never sent twice, does not fail on a connection that was already gone."""
    sock = connection.sock
    if sock is None:
        return True
    try:
        ready, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(ready)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, socket.gaierror):
        return "host not found"
    client, tls = sys.modules.get("http.client"), sys.modules.get("ssl")  # loaded if they were used
    if client is not None and isinstance(exc, client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if tls is not None and isinstance(exc, tls.SSLCertVerificationError):
        # set by ssl's handshake; one raised by hand (a transport given to the client) may lack it
        return getattr(exc, "verify_message", None) or "certificate verify failed"
    text = str(exc).strip()
    return text or type(exc).__name__
