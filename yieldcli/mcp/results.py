"""What a tool answers: structured content checked against its output schema, or a tool error that
carries the library's `kind`. Text from the service is made inert before it reaches the model."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from yieldcli.errors import YieldError

NAME_LIMIT = 64


def inert(value: object, limit: int = NAME_LIMIT) -> str:
    """Service text as the model may see it: no control or format characters (escapes, bidi
    overrides, zero-width), whitespace collapsed, at most `limit` characters."""
    text = "".join(" " if unicodedata.category(ch).startswith(("C", "Z")) else ch for ch in str(value))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ok(model: BaseModel) -> CallToolResult:
    data = model.model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))], structured_content=data
    )


def failure(exc: BaseException) -> CallToolResult:
    """A tool error: the message and `kind` of a library error; anything else is a bug, said plainly
    (its text may hold what the model must not see, so it stays out)."""
    if isinstance(exc, YieldError):
        error: dict[str, Any] = {"kind": exc.kind, "message": inert(exc.message, 600)}
        if exc.hint:
            error["hint"] = inert(exc.hint, 300)
    else:
        error = {
            "kind": "error",
            "message": f"unexpected error ({type(exc).__name__}): see the audit log and the server's stderr",
        }
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps({"error": error}, ensure_ascii=False))],
        structured_content={"error": error},
        is_error=True,
    )
