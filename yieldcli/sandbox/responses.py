"""What the sandbox service answers: status, content type, body and headers."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

JSON = "application/json"
PLAIN_TEXT = "text/plain; charset=utf-8"


@dataclass
class Response:
    status: int
    content_type: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    # True: the server drops the connection without answering (a fault simulating a dead peer).
    disconnect: bool = False

    def json(self) -> Any:
        return json.loads(self.body)


def json_response(status: int, obj: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(status, JSON, json.dumps(obj, separators=(",", ":")).encode(), dict(headers or {}))


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return json_response(status, {"message": message}, headers)


def query_failure(detail: str) -> Response:
    """The service's plain-text answer to a query string it cannot deserialize: a JSON string literal."""
    text = f"Failed to deserialize query string: {detail}"
    return Response(400, PLAIN_TEXT, json.dumps(text).encode())


class BadRequest(Exception):
    """Raised deep in request handling; its response is the answer."""

    def __init__(self, response: Response):
        self.response = response
