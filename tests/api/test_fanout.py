"""Many GETs from one thread (`yieldcli.api.fanout`, `ServiceClient.serve_each`), against real servers
on loopback: a scripted HTTP/1.1 server for the framings and failures, the sandbox over TLS, the proxy."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from tests.conftest import TEST_API_KEY
from tests.library.proxy_server import ProxyServer
from yieldcli.api import fanout
from yieldcli.api.endpoints import Endpoint, Endpoints
from yieldcli.api.fanout import FIRST_CONNECTIONS, exchange_all
from yieldcli.api.sync import ServiceClient
from yieldcli.api.transport import Response, Transport, TransportError, TransportTimeout

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)


@pytest.fixture(autouse=True)
def no_proxy_or_ca_environment(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def body_of(path: str) -> bytes:
    return (path.encode() + b" \xe2\x82\xac ") * 500  # some 10 KB: more than one recv on the way


class Scripted:
    """An HTTP/1.1 server answering each GET by its path: /length/..., /chunked/..., /until-close/...,
    /interim/..., /silent, /health (503 with Retry-After: 0, then 200), /busy/... (429 with
    Retry-After: 1 the first time each is asked, then 200). With `drop_after_answer`, every
    connection is closed after one answer without saying so: a client reusing it finds it stale.
    `backlog`: its accept queue; `asleep`: seconds before it starts accepting."""

    def __init__(self, drop_after_answer: bool = False, backlog: int = 128, asleep: float = 0.0):
        self.drop_after_answer = drop_after_answer
        self.asleep = asleep
        self.connections = 0
        self.flaky_seen = 0
        self.busy_seen: set[str] = set()
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=backlog)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        time.sleep(self.asleep)
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            pending = b""
            while True:
                while b"\r\n\r\n" not in pending:
                    data = conn.recv(65536)
                    if not data:
                        return
                    pending += data
                head, _, pending = pending.partition(b"\r\n\r\n")
                path = head.split(b" ")[1].decode()
                if not self._answer(conn, path) or self.drop_after_answer:
                    return

    def _answer(self, conn: socket.socket, path: str) -> bool:
        """Send the answer; False when the connection ends with it."""
        body = body_of(path)
        if path.startswith("/length/"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        elif path.startswith("/chunked/"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for at in range(0, len(body), 3000):
                piece = body[at : at + 3000]
                conn.sendall(b"%x;ext=1\r\n" % len(piece) + piece + b"\r\n")
                time.sleep(0.001)
            conn.sendall(b"0\r\nX-Trailer: yes\r\n\r\n")
        elif path.startswith("/until-close/"):
            conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body)
            return False
        elif path.startswith("/interim/"):
            conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n")
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        elif path.startswith("/busy/"):  # busy the first time each is asked, for a second
            if path not in self.busy_seen:
                self.busy_seen.add(path)
                conn.sendall(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n")
            else:
                conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n"ok"')
        elif path.startswith("/silent"):
            time.sleep(5)
            return False
        elif path.startswith("/health"):  # flaky: ServiceClient asks /health
            self.flaky_seen += 1
            if self.flaky_seen == 1:
                conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 0\r\nContent-Length: 0\r\n\r\n")
            else:
                answer = b'{"status": "ok", "n": 123456789012345678901234567890}'
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(answer) + answer)
        return True


@pytest.fixture
def scripted():
    server = Scripted()
    yield server
    server.close()


def test_answers_come_in_request_order_whatever_frames_their_bodies(scripted):
    kinds = ["length", "chunked", "until-close", "interim"]
    targets = [f"/{kinds[i % 4]}/{i}" for i in range(24)]
    transport = Transport(scripted.url, timeout=10)
    outcomes = [o for o, _ in exchange_all(transport, targets, {"accept": "application/json"}, window=5)]
    assert [o.status for o in outcomes if isinstance(o, Response)] == [200] * 24
    assert [o.content for o in outcomes if isinstance(o, Response)] == [body_of(t) for t in targets]
    # Kept-alive connections carried several requests each; at most `window` were ever open at once.
    assert scripted.connections < 24


def test_a_connection_the_server_dropped_while_idle_is_retried_once_on_a_new_one():
    server = Scripted(drop_after_answer=True)
    try:
        targets = [f"/length/{i}" for i in range(20)]
        outcomes = [o for o, _ in exchange_all(Transport(server.url, timeout=10), targets, {}, window=2)]
        assert [o.content for o in outcomes if isinstance(o, Response)] == [body_of(t) for t in targets]
    finally:
        server.close()


def test_a_server_that_never_answers_times_out(scripted):
    # The server would close the connection after 5 s: a timeout is what comes first.
    ((outcome, _),) = exchange_all(Transport(scripted.url, timeout=0.3), ["/silent"], {}, window=4)
    assert isinstance(outcome, TransportTimeout)


def test_nothing_listening_is_a_refused_connection_for_each_request():
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    transport = Transport(f"http://127.0.0.1:{port}", timeout=5)
    outcomes = [o for o, _ in exchange_all(transport, ["/a", "/b"], {}, window=2)]
    assert [(type(o), str(o)) for o in outcomes] == [(TransportError, "connection refused")] * 2


def test_a_retryable_first_answer_is_retried_by_the_client_rules(scripted):
    slept: list[float] = []
    with ServiceClient(scripted.url, TEST_API_KEY, sleep=slept.append) as api:
        bodies = list(api.serve_each(Endpoints.health, [((), {})] * 3, window=3))
    assert slept == [0.0]  # the 503's Retry-After
    assert bodies == [{"status": "ok", "n": 123456789012345678901234567890}] * 3


def test_answers_that_say_retry_after_together_are_retried_together(scripted):
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    busy = Endpoint("/busy/{n}", arguments=("n",))
    with ServiceClient(scripted.url, TEST_API_KEY, sleep=sleep) as api:
        bodies = list(api.serve_each(busy, [((n,), {}) for n in range(6)], window=6))
    assert bodies == ["ok"] * 6
    # Each waited its second from when its 429 came, not one second after the previous retry.
    assert len(slept) == 6 and sum(slept) < 2.5


def test_pages_over_tls_are_the_pages_read_one_at_a_time(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET

    calls = [((DEMO_WALLET, DEMO_STRATEGY_ID), {"page": n, "limit": 1}) for n in (1, 2, 3, 1)]
    with ServiceClient(url, TEST_API_KEY) as api:
        together = list(api.serve_each(Endpoints.positions, calls, window=3))
        alone = [api.serve(Endpoints.positions, *arguments, **query) for arguments, query in calls]
    assert together == alone
    assert [body["meta"]["page"] for body in together] == [1, 2, 3, 1]


def test_through_an_http_proxy_every_request_is_in_absolute_form_with_its_credentials(monkeypatch, sandbox):
    with ProxyServer(credentials=("alice", "pw")) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url("alice:pw"))
        with ServiceClient(sandbox.url, TEST_API_KEY) as api:
            bodies = list(api.serve_each(Endpoints.health, [((), {})] * 4, window=2))
    assert bodies == ["OK"] * 4
    assert proxy.requests == [("GET", f"{sandbox.url}/health", proxy.expected)] * 4


def test_https_through_a_proxy_goes_through_its_tunnel(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with ProxyServer() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url())
        with ServiceClient(url, TEST_API_KEY) as api:
            bodies = list(api.serve_each(Endpoints.health, [((), {})] * 3, window=2))
            # A pause (None) on this path too: what follows it is asked once what came before was read.
            paused = list(api.serve_each(Endpoints.health, [((), {}), None, ((), {}), None, ((), {})], window=2))
            with pytest.raises(RuntimeError, match="no request in flight"):
                list(api.serve_each(Endpoints.health, [((), {}), None, None, ((), {})], window=2))
    assert bodies == paused == ["OK"] * 3
    assert {method for method, _, _ in proxy.requests} == {"CONNECT"}


class Paused:
    """Targets with a pause: two, then None until the caller says it has read an answer, then two more."""

    def __init__(self) -> None:
        self.read = False
        self.given: list[str | None] = []
        self._queue = ["/length/1", "/length/2"]
        self._after = ["/length/3", "/length/4"]

    def __iter__(self) -> Paused:
        return self

    def __next__(self) -> str | None:
        if not self._queue and self.read and self._after:
            self._queue, self._after = self._after, []
        if self._queue:
            target: str | None = self._queue.pop(0)
        elif self._after:
            target = None
        else:
            raise StopIteration
        self.given.append(target)
        return target


def test_a_pause_asks_nothing_more_until_an_answer_is_read(scripted):
    targets = Paused()
    answers = []
    for outcome, _ in exchange_all(Transport(scripted.url, timeout=10), targets, {}, window=32):
        assert isinstance(outcome, Response)
        answers.append(outcome.content)
        targets.read = True
    assert answers == [body_of(f"/length/{n}") for n in (1, 2, 3, 4)]
    first_pause = targets.given.index(None)
    assert targets.given[:first_pause] == ["/length/1", "/length/2"]  # nothing past the pause before a read
    with pytest.raises(RuntimeError, match="no request in flight"):
        list(exchange_all(Transport(scripted.url, timeout=10), iter([None]), {}, window=32))


class Counting(Scripted):
    """Answers every GET with its path after `delay` seconds; records how many connections it had
    accepted when it sent its first answer."""

    def __init__(self, backlog: int, delay: float = 0.03, asleep: float = 0.0):
        self.delay = delay
        self.accepted_at_first_answer: int | None = None
        self._lock = threading.Lock()
        super().__init__(backlog=backlog, asleep=asleep)

    def _answer(self, conn: socket.socket, path: str) -> bool:
        time.sleep(self.delay)
        with self._lock:
            if self.accepted_at_first_answer is None:
                self.accepted_at_first_answer = self.connections
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(path) + path.encode())
        return True


def test_connections_open_a_few_at_once_then_more_as_they_answer():
    # Python's http.server keeps 5 connections waiting: 32 opened in one burst would lose their SYNs.
    # A queue large enough for the burst, so the server sees how many the client opens before an answer.
    server = Counting(backlog=128)
    try:
        targets = [f"/page/{i}" for i in range(100)]
        outcomes = [o for o, _ in exchange_all(Transport(server.url, timeout=10), targets, {}, window=32)]
    finally:
        server.close()
    assert [o.content for o in outcomes if isinstance(o, Response)] == [t.encode() for t in targets]
    assert server.accepted_at_first_answer is not None and server.accepted_at_first_answer <= FIRST_CONNECTIONS
    assert FIRST_CONNECTIONS < server.connections <= 32  # more came as the first answered, never past the window


def test_a_connect_whose_syn_was_lost_is_opened_again(monkeypatch):
    # A queue of one, not read for a while: the SYNs past it are dropped, as a burst meets a full queue.
    monkeypatch.setattr(fanout, "STALL_AFTER", 0.05)
    opened: list[int] = []
    connect = fanout._Fanout._connect

    def counted(self):
        opened.append(1)
        return connect(self)

    monkeypatch.setattr(fanout._Fanout, "_connect", counted)
    server = Counting(backlog=0, delay=0, asleep=0.3)
    try:
        targets = [f"/page/{i}" for i in range(FIRST_CONNECTIONS)]
        outcomes = [o for o, _ in exchange_all(Transport(server.url, timeout=10), targets, {}, window=32)]
    finally:
        server.close()
    assert [o.content for o in outcomes if isinstance(o, Response)] == [t.encode() for t in targets]
    assert len(opened) > len(targets)  # the stalled connects were given up and made again
