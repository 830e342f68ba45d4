"""Many GET requests at once from one thread: non-blocking keep-alive connections, answers in order.

Why not a thread a request (`yieldcli.concurrency.ordered_map` over `Transport.request`): measured
on `positions --all` over 100 pages of 100 items, `http.client` (its header parser is the email
package's) and 32 threads handing pages to the writer cost about as much CPU as decoding,
checking and writing the items. Here one thread keeps up to `window` requests in flight, each on
its own connection (no pipelining: proxies and servers mishandle it), and reads HTTP/1.1 answers
with a few bytes operations (`yieldcli.api.http1`). At most `window` answers are held, so memory
stays flat however many pages there are.

Connections are opened as browsers and curl open them: a few at once (`FIRST_CONNECTIONS`), then one
more for each new connection that has answered, so at most `FIRST_CONNECTIONS` of ours are ever
waiting to be accepted and the number in use grows by that many each round trip up to `window`
(6, 12, 18...). A burst of 32 SYNs overflows a small accept queue (Python's http.server keeps 5):
the kernel drops the rest, and each is retried by TCP after 1 s, then 3 s. Doubling each round trip
instead (one more per answer, as TCP's slow start) opens 12 at once on the third: measured against
a queue of 5, two runs of three then stalled for 200 ms on lost SYNs. A connection still not
established well after others were (`_stalled`) is given up and opened again rather than left
to that retry.

Only the first attempt of each request goes this way: what it gives (an answer of any status, or a
`TransportError`) then goes through the same retry rules as every other request
(`yieldcli.api.sync.ServiceClient.serve_each`). A kept-alive connection the server closed while
idle is retried once on a new one, as the blocking transport does for GET. The timeout is the
blocking transport's: the longest silence allowed while connecting, sending or reading.
"""

from __future__ import annotations

import errno
import os
import selectors
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from yieldcli.api.http1 import Answer
from yieldcli.api.transport import Response, TransportError, TransportTimeout

if TYPE_CHECKING:
    from yieldcli.api.transport import Transport

_READ, _WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE
_END = object()  # no more targets

# Connections opened before any has answered, and at most this many being established at once:
# as browsers open to one host, and what the smallest accept queue in common use holds (a backlog of 5
# is 6 connections waiting): no SYN of ours finds it full.
FIRST_CONNECTIONS = 6
# Answers held (read, not yet taken by the caller) besides those in flight, in windows: while the
# caller is busy with earlier pages, the connections that answered keep working. Memory stays flat.
HELD = 2
# A connect not done after this long (or 4 times the slowest one seen, if longer) lost its SYN:
# a new one is cheaper than TCP's own retry after a second.
STALL_AFTER = 0.2


class _Exchange:
    """One request and, once known, its outcome."""

    __slots__ = ("request", "outcome", "retried", "reopened", "ended")

    def __init__(self, request: bytes):
        self.request = request
        self.outcome: Response | TransportError | None = None
        self.retried = False
        self.reopened = False  # its connect stalled once and was opened again: the next is left to TCP
        self.ended = 0.0  # time.monotonic() when the outcome became known


class _Connection:
    """A socket and the exchange it carries: the request bytes left to send, the answer so far."""

    __slots__ = ("sock", "connected", "ready", "reused", "exchange", "out", "answer", "deadline", "opened")

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.connected = False  # the TCP handshake is done
        self.ready = False  # connected, and through the TLS handshake for https
        self.opened = time.monotonic()
        self.reused = False  # has answered before: a close before any byte means it went stale while idle
        self.exchange: _Exchange | None = None
        self.out = memoryview(b"")
        self.answer = Answer()
        self.deadline = 0.0


Outcome = tuple[Response | TransportError, float]  # and when it was known (time.monotonic())


def exchange_all(
    transport: Transport,
    targets: Iterable[str | None],
    headers: dict[str, str],
    window: int,
    meanwhile: Callable[[], None] | None = None,
) -> Iterator[Outcome]:
    """The outcome of `GET target` for each target (path and query), in order, at most `window` at once,
    with the time it was known: a wait before a retry counts from then, not from when it is read.
    A None among the targets asks nothing more until an outcome before it has been read. `meanwhile`
    is called once, when the first requests are out and their answers not yet in."""
    fan = _Fanout(transport, headers, max(1, window), meanwhile)
    try:
        yield from fan.run(iter(targets))
    finally:
        fan.close()


class _Fanout:
    def __init__(
        self, transport: Transport, headers: dict[str, str], window: int, meanwhile: Callable[[], None] | None
    ):
        self._transport = transport
        self._meanwhile = meanwhile
        # What a non-blocking socket raises when it cannot move yet; ssl only for an https service.
        self._send_later: tuple[type[OSError], ...] = (BlockingIOError,)
        self._receive_later: tuple[type[OSError], ...] = (BlockingIOError,)
        if transport.https:
            import ssl

            self._send_later += (ssl.SSLWantWriteError,)
            self._receive_later += (ssl.SSLWantReadError,)
        self._window = window
        self._target, wire_headers, self._peer = transport.wire(headers)
        self._head = "".join(f"{name}: {value}\r\n" for name, value in wire_headers.items()) + "\r\n"
        self._selector = selectors.DefaultSelector()
        self._idle: list[_Connection] = []
        self._open = 0  # connections, busy or idle
        self._answered = 0  # connections that have answered at least once: each lets one more open
        self._slowest_connect = 0.0
        self._address: Any = None

    def _may_open(self) -> bool:
        """Room for one more connection: under the window, under the ramp (a few, then one more per
        connection that answered), and few enough still being established."""
        connecting = sum(1 for key in self._selector.get_map().values() if not key.data.connected)
        ramp = FIRST_CONNECTIONS + self._answered
        return self._open < min(self._window, ramp) and connecting < FIRST_CONNECTIONS

    def run(self, targets: Iterator[str | None]) -> Iterator[Outcome]:
        pending: deque[_Exchange] = deque()  # in order: in flight, or answered and not yet taken
        waiting: deque[_Exchange] = deque()  # in `pending`, not yet given a connection
        while True:
            paused = False
            in_flight = sum(1 for exchange in pending if exchange.outcome is None)
            while in_flight < self._window and len(pending) < HELD * self._window:
                target = next(targets, _END)
                if target is _END:
                    break
                if target is None:  # nothing more until the caller has read an answer
                    paused = True
                    break
                assert isinstance(target, str)
                exchange = _Exchange(f"GET {self._target(target)} HTTP/1.1\r\n{self._head}".encode("latin-1"))
                pending.append(exchange)
                waiting.append(exchange)
                in_flight += 1
            if not pending:
                if paused:
                    raise RuntimeError("asked to wait for an answer with no request in flight")
                return
            while waiting and (self._idle or self._may_open()):
                self._send(waiting.popleft())
            # Read what has come, waiting only when the next answer in order has not: a connection
            # that answered takes its next request before the caller is handed this answer.
            meanwhile, self._meanwhile = self._meanwhile, None
            if meanwhile is not None:
                meanwhile()
            self._wait(waiting, block=pending[0].outcome is None)
            if pending[0].outcome is not None:
                done = pending.popleft()
                assert done.outcome is not None
                yield done.outcome, done.ended

    def close(self) -> None:
        for key in list(self._selector.get_map().values()):
            key.data.sock.close()
        for connection in self._idle:
            connection.sock.close()
        self._selector.close()

    # --- moving bytes ------------------------------------------------------------------------------

    def _send(self, exchange: _Exchange) -> None:
        if self._idle and not exchange.retried:
            connection = self._idle.pop()
            self._selector.register(connection.sock, _WRITE, connection)
        else:
            if self._idle and self._open >= self._window:
                # A retry after a stale connection goes on a new one (any kept one may be stale too):
                # the longest idle makes room for it.
                self._idle.pop(0).sock.close()
                self._open -= 1
            try:
                connection = self._connect()
            except OSError as exc:
                exchange.outcome, exchange.ended = self._transport.error(exc), time.monotonic()
                return
        connection.exchange = exchange
        connection.out = memoryview(exchange.request)
        connection.answer = Answer()
        connection.deadline = time.monotonic() + self._transport.timeout

    def _connect(self) -> _Connection:
        if self._address is None:
            host, port = self._peer
            self._address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        family, kind, proto, _, address = self._address
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        code = sock.connect_ex(address)
        if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK):
            sock.close()
            raise OSError(code, os.strerror(code))  # OSError picks the subclass: ConnectionRefusedError, ...
        connection = _Connection(sock)
        self._selector.register(sock, _WRITE, connection)
        self._open += 1
        return connection

    def _wait(self, waiting: deque[_Exchange], block: bool = True) -> None:
        """Move every connection as far as the network allows, waiting (if `block`) at most until the
        nearest deadline."""
        busy = [key.data for key in self._selector.get_map().values()]
        if not busy:
            return
        now = time.monotonic()
        stall = max(STALL_AFTER, 4 * self._slowest_connect)
        stalled = [
            c
            for c in busy
            if not c.connected and c.exchange is not None and not c.exchange.reopened and now - c.opened >= stall
        ]
        for connection in stalled:
            self._reopen(connection, waiting)
        if stalled:
            return
        nearest = min(
            [c.deadline for c in busy]
            + [c.opened + stall for c in busy if not c.connected and c.exchange and not c.exchange.reopened],
        )
        if min(c.deadline for c in busy) <= now:
            for connection in busy:
                if connection.deadline <= now:
                    self._end(connection, TransportTimeout(), keep=False)
            return
        for key, _ in self._selector.select(max(nearest - now, 0) if block else 0):
            connection = key.data
            try:
                self._step(connection)
            except (OSError, ValueError) as exc:
                self._broken(connection, exc, waiting)

    def _step(self, connection: _Connection) -> None:
        if not connection.ready and not self._handshake(connection):
            return
        if connection.out:
            try:
                sent = connection.sock.send(connection.out)
            except self._send_later:
                return
            connection.out = connection.out[sent:]
            connection.deadline = time.monotonic() + self._transport.timeout
            if not connection.out:
                self._selector.modify(connection.sock, _READ, connection)
            return
        self._receive(connection)

    def _handshake(self, connection: _Connection) -> bool:
        """True once connected (and through TLS): the request can be sent."""
        sock = connection.sock
        if not connection.connected:
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                raise OSError(code, os.strerror(code))
            connection.connected = True
            self._slowest_connect = max(self._slowest_connect, time.monotonic() - connection.opened)
            if not self._transport.https:
                connection.ready = True
                return True
            self._selector.unregister(sock)
            sock = connection.sock = self._transport.tls_context().wrap_socket(
                sock, server_hostname=self._transport.host, do_handshake_on_connect=False
            )
            self._selector.register(sock, _WRITE, connection)
        import ssl  # https only: loaded with the TLS context

        assert isinstance(sock, ssl.SSLSocket)
        try:
            sock.do_handshake()
        except ssl.SSLWantReadError:
            self._selector.modify(sock, _READ, connection)
            return False
        except ssl.SSLWantWriteError:
            self._selector.modify(sock, _WRITE, connection)
            return False
        connection.ready = True
        self._selector.modify(sock, _WRITE, connection)
        return True

    def _receive(self, connection: _Connection) -> None:
        sock, answer = connection.sock, connection.answer
        while True:
            asked = answer.wanted()
            try:
                data = sock.recv(asked)
            except self._receive_later:
                return self._timed(connection)
            if not data:
                if answer.ends_at_close():
                    break
                if answer.empty():
                    # Closed while idle (stale: retried once), or before answering.
                    raise ConnectionResetError("the server closed the connection without answering")
                raise ConnectionError("the server closed the connection in the middle of its answer")
            if answer.feed(data):
                break
            # Less than asked: the socket is drained (TLS may still hold decrypted bytes).
            if len(data) < asked and not (self._transport.https and sock.pending()):  # type: ignore[attr-defined]
                return self._timed(connection)
        self._end(connection, answer.response(), keep=not answer.closes())

    def _timed(self, connection: _Connection) -> None:
        connection.deadline = time.monotonic() + self._transport.timeout

    def _end(self, connection: _Connection, outcome: Response | TransportError, *, keep: bool) -> None:
        exchange = connection.exchange
        assert exchange is not None
        exchange.outcome, exchange.ended = outcome, time.monotonic()
        connection.exchange = None
        if isinstance(outcome, Response) and not connection.reused:
            self._answered += 1  # the server took this one: one more may open
        if keep:
            connection.reused = True
            self._selector.unregister(connection.sock)
            self._idle.append(connection)
            return
        self._selector.unregister(connection.sock)
        connection.sock.close()
        self._open -= 1

    def _reopen(self, connection: _Connection, waiting: deque[_Exchange]) -> None:
        """Give up a connect whose SYN was lost (nothing was sent on it) and ask again on a new one first."""
        exchange = connection.exchange
        assert exchange is not None
        connection.exchange = None
        exchange.reopened = True
        self._selector.unregister(connection.sock)
        connection.sock.close()
        self._open -= 1
        waiting.appendleft(exchange)

    def _broken(self, connection: _Connection, exc: BaseException, waiting: deque[_Exchange]) -> None:
        exchange = connection.exchange
        assert exchange is not None
        stale = (
            connection.reused
            and connection.answer.empty()
            and isinstance(exc, (ConnectionResetError, BrokenPipeError))
            and not exchange.retried
        )
        self._end(connection, self._transport.error(exc), keep=False)
        if stale:  # closed while idle: once more on a new connection
            exchange.outcome, exchange.retried = None, True
            waiting.appendleft(exchange)
