"""An RPC on loopback in front of the sandbox's that rewrites chosen calls and answers, for the tests of an
RPC that lies: `before(call)` may change each call of a request before it is forwarded, and
`rewrite(call, result, batched)` sees each call with its answer (decoded JSON) and may change the answer in
place; `batched` says whether the call came in a batch."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Rewrite = Callable[[dict[str, Any], dict[str, Any], bool], None]
Before = Callable[[dict[str, Any]], None]


class RewritingRpc:
    def __init__(self, upstream: str, rewrite: Rewrite, before: Before | None = None):
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                batched = isinstance(body, list)
                for call in body if batched else [body]:
                    if before is not None:
                        before(call)
                sent = json.dumps(body).encode()
                request = urllib.request.Request(upstream, sent, {"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=60) as answer:
                    out = json.loads(answer.read())
                for call, result in zip(*(x if batched else [x] for x in (body, out)), strict=True):
                    rewrite(call, result, batched)
                data = json.dumps(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
