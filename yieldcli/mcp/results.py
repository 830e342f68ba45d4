"""What a tool answers: structured content checked against its output schema, or a tool error that
carries the library's `kind`. Text from the service is made inert before it reaches the model."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from yieldcli.errors import YieldError
from yieldcli.escapes import default_ignorable
from yieldcli.urls import secret_forms

NAME_LIMIT = 64

_hidden: list[str] = []  # the secrets of this process, in every form (`conceal`)


def conceal(*secrets: str | None, pieces: tuple[str, ...] = ()) -> None:
    """Never let these reach the model, whichever text (of the service, the RPC, the system) carries
    them: `secrets` (the API key) in every form a server may echo, `pieces` as they are (the parts of
    the service and RPC URLs but scheme, host and port, in their forms; the keypair's path)."""
    for secret in secrets:
        _hidden.extend(form for form in secret_forms(secret) if form not in _hidden)
    _hidden.extend(piece for piece in pieces if len(piece) >= 4 and piece not in _hidden)
    _hidden.sort(key=len, reverse=True)


def hide(text: str) -> str:
    """`text` with every concealed secret replaced by `…` (for what is not made inert: the audit log
    and the policy as resources, whose text is ours and must stay as it is otherwise)."""
    for form in _hidden:
        text = text.replace(form, "…")
    return text


def inert(value: object, limit: int = NAME_LIMIT) -> str:
    """Service text as the model may see it: no secret of ours, nothing invisible (default-ignorable
    code points, format, private-use and unassigned characters are dropped; controls, line breaks and
    other spaces become one plain space), at most `limit` characters."""
    kept = []
    for ch in str(value):
        category = unicodedata.category(ch)
        if default_ignorable(ch) or category in ("Cf", "Cs", "Co", "Cn"):
            continue
        kept.append(" " if category.startswith(("C", "Z")) else ch)
    text = "".join(kept)
    for form in _hidden:  # after the invisible characters are gone: they cannot split a key any more
        text = text.replace(form, "…")
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
