"""The sandbox service over HTTP/1.1 on loopback: stdlib `http.server`, one thread per connection."""

from __future__ import annotations

import json
import os
import secrets
import selectors
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from yieldcli.files import write_atomically
from yieldcli.sandbox.chain.knobs import Network
from yieldcli.sandbox.ledger import Ledger
from yieldcli.sandbox.service import JSON, POST_FIELDS, Fault, PostHandler, Response, Service
from yieldcli.urls import is_loopback

if TYPE_CHECKING:
    from yieldcli.sandbox.chain.knobs import Network
    from yieldcli.sandbox.runtime import Runtime
    from yieldcli.sandbox.strategy import StrategyChain
    from yieldcli.sandbox.strategy_rpc import StrategyRpcServer

CHAIN_FILE = "chain.json"
STATE_FILE = "state.json"
RPC_PORT_FILE = "rpc-port"

MAX_BODY_BYTES = 1 << 20
IDLE_TIMEOUT_S = 60


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Without this, Nagle's algorithm and delayed ACKs add ~175 ms to each keep-alive request.
    disable_nagle_algorithm = True
    timeout = IDLE_TIMEOUT_S
    server_version = "yield-sandbox"
    sys_version = ""
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Malformed requests get the service's JSON error shape instead of an HTML page."""
        body = json.dumps({"message": message or self.responses.get(code, ("Error",))[0]}).encode()
        self.close_connection = True
        try:
            self.send_response(code)
            self.send_header("Content-Type", JSON)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD" and code >= 200 and code not in (204, 304):
                self.wfile.write(body)
        except OSError:
            pass

    def _dispatch(self) -> None:
        if self.headers.get("Transfer-Encoding", "").lower() not in ("", "identity"):
            self.send_error(411, "Content-Length required: chunked request bodies are not supported")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.send_error(400, "Invalid Content-Length")
            return
        if length < 0:
            self.send_error(400, "Invalid Content-Length")
            return
        if length > MAX_BODY_BYTES:
            self.send_error(413, "Request body too large")
            return
        body = self.rfile.read(length) if length else b""
        target = urlsplit(self.path)
        response = self.server.service.handle(self.command, target.path, target.query, dict(self.headers.items()), body)
        if response.disconnect:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for name, value in response.headers.items():
            if name.lower() not in ("content-length", "content-type"):
                self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _dispatch

    def __getattr__(self, name: str) -> Any:
        # http.server answers 501 itself, before any authentication, to a method without a do_*;
        # every syntactically valid method reaches the service instead (401 or 405, as the real one).
        if name.startswith("do_") and name[3:].isalpha() and name[3:].isupper():
            return self._dispatch
        raise AttributeError(name)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # The stdlib's backlog of 5 drops the SYNs of a client opening 16 connections at once, which
    # then wait a full second to retry: concurrent clients would look slow for no reason of theirs.
    request_queue_size = 128
    service: Service

    def __init__(self, address: tuple[str, int], service: Service, family: socket.AddressFamily):
        self.address_family = family
        self.service = service
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        self._stop_requested = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()
        super().__init__(address, _Handler)

    def run(self) -> None:
        """Accept connections until `halt()`; unlike serve_forever, stopping costs no poll interval."""
        self._stopped.clear()
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(self, selectors.EVENT_READ)
                selector.register(self._wake_r, selectors.EVENT_READ)
                while not self._stop_requested.is_set():
                    for key, _ in selector.select():
                        if key.fileobj is self and not self._stop_requested.is_set():
                            self._handle_request_noblock()  # type: ignore[attr-defined]  # socketserver's, missing from typeshed
        finally:
            self._stopped.set()

    def halt(self) -> None:
        self._stop_requested.set()
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        self._stopped.wait(timeout=5)

    def server_close(self) -> None:
        super().server_close()
        self._wake_r.close()
        self._wake_w.close()

    def track(self, conn: socket.socket, alive: bool) -> None:
        with self._connections_lock:
            (self._connections.add if alive else self._connections.discard)(conn)

    def drop_connections(self) -> None:
        with self._connections_lock:
            conns = list(self._connections)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A broken request or a client hanging up must not print tracebacks or stop the server.
        pass


def _state_file(path: Path | str) -> Path:
    given = Path(path)
    if given.is_dir() or not given.suffix:
        given.mkdir(parents=True, exist_ok=True)
        return given / STATE_FILE
    return given


class SandboxServer:
    """The sandbox service on `host:port` (port 0: any free port), state in `state_path`: a file, or
    a folder (one that exists, or a name without a suffix) that then holds `state.json`. Every file
    the sandbox keeps (state, chain, lock, RPC port) is in that one folder.

    Binds at construction, so `url` is known before `start()` or `serve_forever()`.

    The sandbox's chain (a `Runtime` whose state is `chain.json` next to the ledger's file, and a
    Solana JSON-RPC server for it on loopback) starts on first use: the first deposit, withdraw or
    close-account request, or the first look at `rpc_url`, `rpc` or `runtime`. Read requests never
    need it (the ledger follows the chain as transactions are confirmed), so they do not pay for it.
    On a fresh chain, what the ledger says the demo wallet holds is put on chain first.
    """

    def __init__(
        self,
        state_path: Path | str,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        latency_ms: int = 0,
        seed_positions: int | None = None,
        seed_wallets: int | None = None,
        *,
        allow_remote: bool = False,
        network: Network | None = None,
        rpc_port: int = 0,
    ):
        if not is_loopback(host) and not allow_remote:
            raise ValueError(
                f"refusing to serve the sandbox on {host!r}: it is not a loopback address "
                "(the sandbox has no TLS and holds a test API key); pass allow_remote=True to do it anyway"
            )
        # Network knobs: given, else from YIELD_SANDBOX_* in the environment (how the embedded sandbox gets them).
        self._network = network
        if network is None:
            self._network = Network.from_env(os.environ)
        self.api_key = api_key if api_key is not None else secrets.token_urlsafe(24)
        self._rpc_port = rpc_port  # 0: the port this folder's chain used last when free, else any
        self.ledger = Ledger(_state_file(state_path), seed_positions=seed_positions, seed_wallets=seed_wallets)
        self.service = Service(self.ledger, self.api_key, latency_ms=latency_ms)
        bind_host = host.strip("[]")
        family = socket.AF_INET6 if ":" in bind_host else socket.AF_INET
        self._httpd = _HTTPServer((bind_host, port), self.service, family)
        self.host = bind_host
        self.port: int = self._httpd.server_address[1]
        self._thread: threading.Thread | None = None
        self._serving = False
        self._closed = False
        self.chain_path = self.ledger.path.with_name(CHAIN_FILE)
        self._chain: StrategyChain | None = None
        self._rpc: StrategyRpcServer | None = None
        self._chain_lock = threading.Lock()
        for path in POST_FIELDS:
            self.service.post_handlers[path] = self._handler_for(path)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    # -- the chain

    @property
    def chain(self) -> StrategyChain:
        """The strategy on the sandbox chain, started (and its RPC server with it) on first use."""
        return self.start_chain()

    def start_chain(self) -> StrategyChain:
        """Start the sandbox chain and its RPC server now, unless they run already; returns the chain."""
        with self._chain_lock:
            if self._chain is None:
                if self._closed:
                    raise RuntimeError("this sandbox server was stopped; create a new one")
                from yieldcli.sandbox.strategy import StrategyChain

                chain = StrategyChain(self.ledger, self.chain_path, self._network)
                rpc_host = "127.0.0.1" if ":" in self.host else self.host
                self._rpc = self._start_rpc(chain, rpc_host)
                self._chain = chain
            return self._chain

    def _start_rpc(self, chain: StrategyChain, host: str) -> StrategyRpcServer:
        """The RPC server on the port this folder's chain used last, when it is free, so its URL stays
        the same between runs (the client's in-flight journal is keyed by RPC URL); else any port."""
        from yieldcli.sandbox.strategy_rpc import StrategyRpcServer

        port_file = self.chain_path.with_name(RPC_PORT_FILE)
        if self._rpc_port:
            # Asked for: that port or an error (PubSub takes the next one).
            return StrategyRpcServer(chain, host, self._rpc_port).start()
        try:
            preferred = int(port_file.read_text().strip())
        except (OSError, ValueError):
            preferred = 0
        try:
            rpc = StrategyRpcServer(chain, host, preferred if 0 < preferred < 65536 else 0)
        except OSError:
            rpc = StrategyRpcServer(chain, host, 0)
        port = rpc.url.rsplit(":", 1)[1]
        if str(preferred) != port:
            try:
                write_atomically(port_file, port + "\n")
            except OSError:
                pass
        return rpc.start()

    @property
    def runtime(self) -> Runtime:
        return self.chain.runtime

    @property
    def rpc(self) -> StrategyRpcServer:
        self.start_chain()
        assert self._rpc is not None
        return self._rpc

    @property
    def rpc_url(self) -> str:
        return self.rpc.url

    @property
    def chain_started(self) -> bool:
        return self._chain is not None

    def _handler_for(self, path: str) -> PostHandler:
        def handle(params: dict[str, Any]) -> Response:
            return self.chain.handlers()[path](params)

        return handle

    def _stop_chain(self) -> None:
        with self._chain_lock:
            rpc, self._rpc, self._chain = self._rpc, None, None
        if rpc is not None:
            rpc.stop()

    @property
    def latency_ms(self) -> int:
        return self.service.latency_ms

    @latency_ms.setter
    def latency_ms(self, value: int) -> None:
        self.service.latency_ms = value

    def add_fault(self, *args: Any, **kwargs: Any) -> Fault:
        """The next `times` requests (None: all) matching method ("*": any) and path regex get this
        raw answer; the arguments are those of `Faults.add` in service.py."""
        return self.service.faults.add(*args, **kwargs)

    def clear_faults(self) -> None:
        self.service.faults.clear()

    def reset(self) -> None:
        """Back to the demo data, on a fresh chain (started again on next use, with a new RPC port)."""
        self._stop_chain()
        self.chain_path.unlink(missing_ok=True)
        # A new chain gets a new RPC URL: what a client remembers of the old one must not match it.
        self.chain_path.with_name(RPC_PORT_FILE).unlink(missing_ok=True)
        self.ledger.reset()

    def start(self) -> SandboxServer:
        """Serve in a daemon thread; returns self."""
        if self._closed:
            raise RuntimeError("this sandbox server was stopped; create a new one")
        if self._thread is None:
            self._serving = True
            self._thread = threading.Thread(
                target=self._httpd.run,
                name=f"yield-sandbox-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted (KeyboardInterrupt propagates) or stopped."""
        self._serving = True
        try:
            self._httpd.run()
        finally:
            self._serving = False
            self._close()

    def stop(self) -> None:
        """Stop serving and drop open connections (safe to call twice, or from another thread)."""
        if self._serving:
            self._serving = False
            self._httpd.halt()  # returns once the serving loop has exited
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._close()

    def _close(self) -> None:
        if not self._closed:
            self._closed = True
            self._httpd.server_close()
            self._httpd.drop_connections()
            self._stop_chain()

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
