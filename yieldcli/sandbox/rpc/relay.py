"""A loopback relay in front of a JSON-RPC server that counts HTTP exchanges and can add latency.

What a far RPC looks like from here: `RpcRelay(upstream, delay=0.1)` adds 100 ms to every HTTP
exchange (one JSON-RPC request or one batch alike), and `exchanges` lists what each exchange asked,
in order, so a test or a benchmark counts the round trips a command made before it sent.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from yieldcli.sandbox.rpc.server import Served


@dataclass(frozen=True)
class Exchange:
    started: float  # time.monotonic() when the request arrived
    methods: tuple[str, ...]  # one for a single request, several for a batch


class RpcRelay(Served):
    """`RpcRelay(upstream_url, delay=0.1).start()`; `.url`; `.exchanges`; `.stop()`. Also a context manager."""

    def __init__(self, upstream: str, *, delay: float = 0.0):
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.delay = delay
        self.exchanges: list[Exchange] = []
        self.lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.relay = self  # type: ignore[attr-defined]

    def clear(self) -> None:
        with self.lock:
            self.exchanges.clear()

    def before(self, method: str) -> list[Exchange]:
        """The exchanges made before the first that asked `method` (all of them if none did)."""
        with self.lock:
            seen = list(self.exchanges)
        for n, exchange in enumerate(seen):
            if method in exchange.methods:
                return seen[:n]
        return seen

    def first(self, method: str) -> Exchange | None:
        with self.lock:
            return next((e for e in self.exchanges if method in e.methods), None)

    def record(self, body: bytes) -> None:
        try:
            request: Any = json.loads(body)
        except ValueError:
            request = None
        items = request if isinstance(request, list) else [request]
        methods = tuple(str(r.get("method")) for r in items if isinstance(r, dict))
        with self.lock:
            self.exchanges.append(Exchange(time.monotonic(), methods))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    _upstream: http.client.HTTPConnection | None = None

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        relay: RpcRelay = self.server.relay  # type: ignore[attr-defined]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        relay.record(body)
        if relay.delay > 0:
            time.sleep(relay.delay)
        if self._upstream is None:
            self._upstream = http.client.HTTPConnection(*relay.upstream, timeout=60)
        self._upstream.request("POST", self.path, body, {"Content-Type": "application/json"})
        answer = self._upstream.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.getheader("Content-Type") or "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass
