"""A real HTTP proxy on loopback for tests: CONNECT tunnels and absolute-form forwarding, optional Basic auth."""

from __future__ import annotations

import base64
import select
import socket
import socketserver
import threading
from urllib.parse import urlsplit


class ProxyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, credentials: tuple[str, str] | None = None):
        self.expected = ("Basic " + base64.b64encode(":".join(credentials).encode()).decode()) if credentials else None
        self.requests: list[tuple[str, str, str | None]] = []  # (method, target, Proxy-Authorization)
        self.tunnelled = bytearray()  # every byte that went through a tunnel, client to server
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)
        self.port = self.server_address[1]

    def url(self, userinfo: str = "") -> str:
        return f"http://{userinfo + '@' if userinfo else ''}127.0.0.1:{self.port}"

    def __enter__(self) -> ProxyServer:
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Handler(socketserver.StreamRequestHandler):
    server: ProxyServer

    def handle(self) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.request.recv(65536)
            if not chunk:
                return
            head += chunk
        head, _, rest = head.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        authorization = headers.get("proxy-authorization")
        with self.server.lock:
            self.server.requests.append((method, target, authorization))
        if self.server.expected and authorization != self.server.expected:
            self.request.sendall(
                b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                b'Proxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'
            )
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream = socket.create_connection((host, int(port)))
            self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self._pipe(upstream, rest)
            return
        parts = urlsplit(target)
        upstream = socket.create_connection((parts.hostname, parts.port or 80))
        kept = [line for line in lines[1:] if not line.lower().startswith(("proxy-authorization", "connection"))]
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        request = "\r\n".join([f"{method} {path} HTTP/1.1", *kept, "Connection: close", "", ""]).encode("latin-1")
        upstream.sendall(request + rest)
        answer = b""
        while chunk := upstream.recv(65536):
            answer += chunk
        status, _, remainder = answer.partition(b"\r\n")
        # One request per connection: say so, so the client does not reuse it.
        self.request.sendall(status + b"\r\nConnection: close" + b"\r\n" + remainder)
        upstream.close()

    def _pipe(self, upstream: socket.socket, first: bytes) -> None:
        if first:
            upstream.sendall(first)
            self.server.tunnelled.extend(first)
        sockets = [self.request, upstream]
        try:
            while True:
                readable, _, _ = select.select(sockets, [], [], 10)
                if not readable:
                    return
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if sock is self.request:
                        with self.server.lock:
                            self.server.tunnelled.extend(data)
                        upstream.sendall(data)
                    else:
                        self.request.sendall(data)
        finally:
            upstream.close()
