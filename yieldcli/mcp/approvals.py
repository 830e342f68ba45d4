"""The person's yes, asked by MCP elicitation, for writes above the automatic limits.

The question is written here from the proposal (the library's effect summary, the fee, the policy's
reason), never from the model's words, and names the proposal it is bound to. The SDK asks it the way
the client's protocol revision expects: inside the `tools/call` as an `input_required` result that the
client answers on its retry (2026-07-28 on; the answer counts only for this exact question, carried in
sealed request state), or as an `elicitation/create` request mid-call (2025-11-25 and before). A
client that declared no elicitation is never asked and gets a refusal; decline and cancel sign nothing.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Elicit
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from yieldcli.errors import Refused, UsageError
from yieldcli.mcp.proposals import Book
from yieldcli.mcp.results import failure, inert


class Approve(BaseModel):
    approve: bool = Field(description="Sign and send exactly this transaction")


class NotNeeded:
    """The policy lets this proposal through without asking (or refuses it anyway)."""


class CannotAsk:
    """The client cannot be asked: it declared no elicitation."""


def question(book: Book, proposal_id: str) -> str:
    p = book.find(proposal_id)
    fee = "unknown" if p.fee is None else f"{p.fee} lamports"
    return (
        f"Approve proposal {p.id}: {inert(p.summary, 300)}. Network fee: {fee}. "
        f"Why you are asked: {inert(p.decision.reason, 200)}. Nothing is signed unless you approve."
    )


def asker(book: Book) -> Any:
    """The resolver the `execute` tool's approval parameter is filled by (see `mcp.server.mcpserver.resolve`)."""

    def approval(proposal_id: str, ctx: Context) -> Elicit[Approve] | NotNeeded | CannotAsk:
        try:
            proposal = book.find(proposal_id)
        except Exception:
            return NotNeeded()  # the tool body reports the unknown proposal
        try:
            verdict = book.current_decision(proposal).verdict
        except Exception:  # a log the limits cannot be counted from: the tool body refuses, with why
            return NotNeeded()  # (asked nothing, approved nothing: execute decides again, unapproved)
        if proposal.state != "open" or verdict != "approval":
            return NotNeeded()
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return CannotAsk()
        return Elicit(question(book, proposal_id), Approve)

    return approval


class ToolErrors:
    """Server middleware, outside the SDK's `requestState` boundary: what the SDK answers for a tool
    call on its own becomes the tools' error, `{"error": {"kind": ...}}`, never a protocol error or a
    bare text the agent may read as a crash. An approval answer whose sealed state is invalid, expired
    or bound to another call (a replay), or whose content is not the question's, is
    `refused.approval_invalid`; arguments that fail the tool's schema are `usage.arguments`."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            if not (isinstance(exc.data, dict) and exc.data.get("reason") == "invalid_request_state"):
                raise
            return _error(_invalid_approval())
        wire = (
            result.model_dump(mode="json", by_alias=True, exclude_none=True)
            if isinstance(result, BaseModel)
            else result
        )
        if not isinstance(wire, dict) or not wire.get("isError") or wire.get("structuredContent") is not None:
            return result
        text = " ".join(str(c.get("text", "")) for c in wire.get("content", ()) if isinstance(c, dict))
        if "Resolver " in text:  # the SDK's words for an approval answer it could not take
            return _error(_invalid_approval())
        return _error(UsageError(f"invalid arguments: {text}", kind="usage.arguments"))


def _invalid_approval() -> Refused:
    return Refused(
        "this approval answer does not belong to this question (invalid, expired, replayed or malformed); "
        "nothing was signed: call execute again to be asked",
        kind="refused.approval_invalid",
    )


def _error(error: Exception) -> dict[str, Any]:
    return failure(error).model_dump(mode="json", by_alias=True, exclude_none=True)
