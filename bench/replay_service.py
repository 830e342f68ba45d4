"""A stand-in for the service that serves pre-rendered answers, for the pagination figure of bench/run.py.

Why not the sandbox itself: it computes every page from scratch, building and sorting all 10,000
rows of the wallet for each request, about 1.5 ms of CPU a page, and its threads share one GIL.
With 16 pages in flight that is some 24 ms of serialized work a wave, more than the 20 ms latency
under test: the concurrent figure measured the sandbox, not the client. This stand-in asks the
sandbox once per distinct request (GET only, in an untimed warm-up run), keeps the answer's bytes,
and from then on answers from memory after the latency: tens of microseconds of CPU a page, so
the figure is the client's. The bytes the client reads are the sandbox's own.
"""

from __future__ import annotations

import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

# Headers the stand-in writes itself, or that would be stale in a replay.
_OWN = {"content-length", "connection", "date", "server", "keep-alive", "transfer-encoding"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True


# The stdlib's accept queue (http.server, socketserver): 5. A client opening many connections in one
# burst has the SYNs past the queue dropped, each retried a second later.
STDLIB_BACKLOG = 5
LARGE_BACKLOG = 128


class ReplayService:
    """GET answers of `upstream` (an http:// URL), pre-rendered, each sent `latency_ms` after its request,
    by a server whose accept queue holds `backlog` connections."""

    def __init__(self, upstream: str, latency_ms: int, backlog: int = LARGE_BACKLOG):
        parts = urlsplit(upstream)
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._delay = latency_ms / 1000
        self._answers: dict[tuple[str, str], bytes] = {}
        self._lock = threading.Lock()
        self.misses = 0  # requests the sandbox answered: none may happen in a timed run
        replay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else delayed ACKs add ~40 ms to keep-alive requests

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                pass

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                key = (self.path, self.headers.get("x-api-key", ""))
                answer = replay._answers.get(key)
                if answer is None:
                    answer = replay._render(self.path, dict(self.headers.items()))
                    with replay._lock:
                        replay._answers[key] = answer
                        replay.misses += 1
                time.sleep(replay._delay)
                self.wfile.write(answer)

        server = type("Server", (_Server,), {"request_queue_size": backlog})
        self._httpd = server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self) -> ReplayService:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _render(self, path: str, headers: dict[str, str]) -> bytes:
        """The sandbox's answer to this GET, as the bytes of one HTTP/1.1 keep-alive response."""
        connection = http.client.HTTPConnection(*self._upstream, timeout=30)
        try:
            connection.request("GET", path, headers={k: v for k, v in headers.items() if k.lower() != "connection"})
            response = connection.getresponse()
            body = response.read()
            lines = [f"HTTP/1.1 {response.status} {response.reason}"]
            lines += [f"{k}: {v}" for k, v in response.getheaders() if k.lower() not in _OWN]
            lines.append(f"Content-Length: {len(body)}")
            return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        finally:
            connection.close()
