"""One HTTP/1.1 answer read from bytes as they arrive: status, headers, and the body framed by
Content-Length, chunked transfer coding, or the connection's close (RFC 9112, section 6).

For `yieldcli.api.fanout`, which reads many answers on non-blocking sockets in one thread, where
`http.client` (which reads from a blocking file) cannot be used. What `http.client` would refuse is
refused here too, as a `ValueError` saying what was wrong.

Why not h11 (the well-kept sans-io parser, already installed with httpx2): on a 100-item page of
9.4 kB it took 76 µs here against this parser's 3.6 µs, which alone would spend 0.7 µs of the
4 µs of CPU an item may cost when streaming (`bench/run.py`, figure 7).
"""

from __future__ import annotations

from yieldcli.api.transport import Response

_LONGEST_HEAD = 65536  # http.client's limit is 100 headers of 64 KiB; no answer of the service comes near
_ASK = 65536  # bytes asked of one recv when the body's size is not known


class Answer:
    """Feed it what the socket gives; `feed` says when the answer is whole."""

    __slots__ = ("_parts", "_size", "_status", "_headers", "_length", "_chunked", "_close", "_empty")

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._size = 0  # bytes in _parts
        self._status = 0  # 0 until the head is read
        self._headers: dict[str, str] = {}
        self._length: int | None = None  # of the body, when the head says it
        self._chunked = False
        self._close = False
        self._empty = True  # nothing received yet

    def empty(self) -> bool:
        return self._empty

    def wanted(self) -> int:
        """How many bytes to ask of the next recv: never more than the rest of a body of known size."""
        if self._status and self._length is not None:
            return max(1, min(_ASK, self._length - self._size))
        return _ASK

    def feed(self, data: bytes) -> bool:
        self._empty = False
        self._parts.append(data)
        self._size += len(data)
        while not self._status:
            buffered = b"".join(self._parts)
            end = buffered.find(b"\r\n\r\n")
            if end < 0:
                if len(buffered) > _LONGEST_HEAD:
                    raise ValueError("the answer's header is too long")
                self._parts = [buffered]
                return False
            rest = buffered[end + 4 :]
            self._parts, self._size = ([rest] if rest else []), len(rest)
            self._head(buffered[:end].decode("latin-1"))
        if self._length is not None:
            return self._size >= self._length
        if self._chunked:
            return self._dechunked() is not None
        return False  # the body ends when the connection does

    def ends_at_close(self) -> bool:
        """The connection closed: the answer is whole if its body was framed by that close."""
        return bool(self._status) and self._length is None and not self._chunked

    def closes(self) -> bool:
        """The connection cannot carry another request after this answer."""
        return self._close

    def response(self) -> Response:
        body = b"".join(self._parts)
        if self._chunked:
            whole = self._dechunked()
            assert whole is not None
            body = whole
        elif self._length is not None:
            body = body[: self._length]
        return Response(self._status, self._headers, body)

    def _head(self, head: str) -> None:
        status_line, *lines = head.split("\r\n")
        version, _, rest = status_line.partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise ValueError(f"the server answered something that is not HTTP/1.x: {status_line[:80]!r}")
        headers: dict[str, str] = {}
        for line in lines:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                raise ValueError(f"the server sent a malformed header line: {line[:80]!r}")
            headers[name.lower()] = value.strip()
        status = int(code)
        if 100 <= status < 200:
            return  # an interim answer (100 Continue, 103 Early Hints): the final one follows
        self._status, self._headers = status, headers
        connection = headers.get("connection", "").lower()
        self._close = "close" in connection or (version == "HTTP/1.0" and "keep-alive" not in connection)
        if status in (204, 304):
            self._length = 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._chunked = True
        elif "content-length" in headers:
            length = headers["content-length"]
            if not length.isdigit():
                raise ValueError(f"the server sent an invalid Content-Length: {length[:40]!r}")
            self._length = int(length)
        else:
            self._close = True  # read until the server closes

    def _dechunked(self) -> bytes | None:
        """The body of a chunked answer, or None while its last chunk has not arrived."""
        data = b"".join(self._parts)
        self._parts = [data]
        pieces: list[bytes] = []
        at = 0
        while True:
            line_end = data.find(b"\r\n", at)
            if line_end < 0:
                return None
            size_text = data[at:line_end].split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ValueError(f"the server sent a malformed chunk size: {size_text[:20]!r}") from None
            at = line_end + 2
            if size == 0:
                # Trailer fields, if any, end with an empty line.
                if data[at : at + 2] == b"\r\n" or data.find(b"\r\n\r\n", at - 2) >= 0:
                    return b"".join(pieces)
                return None
            if len(data) < at + size + 2:
                return None
            if data[at + size : at + size + 2] != b"\r\n":
                raise ValueError("the server sent a chunk longer than its size")
            pieces.append(data[at : at + size])
            at += size + 2
