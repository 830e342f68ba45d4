"""The write tools: typed intents in, proposals out; `execute` signs a proposal once.

One `prepare_*` tool per action row (`yieldcli.client.actions`), made from it: `asset`, `amount` when the
row takes one (`all` where the row lets an agent ask for everything) and the row's options an agent
may set. No tool takes transaction bytes, a key, a strategy, a wallet or a URL: those come from
`yield`'s settings. What is signed is decided by the library's check and the user's policy, not by
the model.
"""

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, Optional

import anyio
from anyio.from_thread import run as run_in_loop
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Resolve
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from yieldcli.client.actions import ACTIONS, Action
from yieldcli.errors import Declined, Refused
from yieldcli.mcp.approvals import Approve, CannotAsk, asker
from yieldcli.mcp.proposals import AgentAsk, Book, Proposal
from yieldcli.mcp.reads import amount
from yieldcli.mcp.results import failure, inert, ok
from yieldcli.tokens import by_mint

PREPARE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True)
EXECUTE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True)
Asset = Annotated[str, Field(max_length=44, description="A known symbol (USDC, SOL, ...) or a mint address")]
DecimalText = Annotated[str, Field(max_length=40, description='Token units as a decimal string, e.g. "1.5"')]


class Decision(BaseModel):
    verdict: Literal["auto", "approval", "refused"]
    reason: str
    kind: str | None = None  # with a refusal: why, as an error kind (refused.policy, policy.unknown_amount, ...)


class ProposalOut(BaseModel):
    proposal_id: str
    action: str
    asset: str
    amount: dict[str, str | None]  # base_units and token_units the transaction moves, as simulated
    effect: str  # the library's summary of the simulated effect
    fee_lamports: str | None
    policy: Decision
    expires_at: float  # Unix seconds
    executable: bool


class OutcomeOut(BaseModel):
    proposal_id: str
    # confirmed, failed, expired or pending; already_sent: these exact bytes had been sent before (by
    # first_proposal_id when it was one of ours) and nothing new moved
    status: str
    signature: str | None
    slot: int | None
    effect: str
    new_transaction: bool  # false with already_sent
    first_proposal_id: str | None = None


def _proposal_out(p: Proposal) -> ProposalOut:
    token = by_mint(p.mint)
    return ProposalOut(
        proposal_id=p.id,
        action=p.intent.action,
        asset=token.symbol if token else p.mint,
        amount=(
            {"base_units": None, "token_units": None}
            if p.raw is None
            else amount(p.raw, token.decimals if token else None).model_dump()
        ),
        effect=inert(p.summary, 300),
        fee_lamports=None if p.fee is None else str(p.fee),
        policy=Decision(
            verdict=p.decision.verdict,  # type: ignore[arg-type]
            reason=inert(p.decision.reason, 300),
            kind=p.decision.kind if p.decision.verdict == "refused" else None,
        ),
        expires_at=p.expires_at,
        executable=p.state == "open",
    )


def register_writes(server: MCPServer, book: Book) -> None:
    async def propose(intent: AgentAsk) -> CallToolResult:
        try:
            return ok(_proposal_out(await anyio.to_thread.run_sync(book.prepare, intent)))
        except Exception as exc:
            return failure(exc)

    for row in ACTIONS.values():
        description = (
            f"{row.proposes} Nothing is signed: the answer is a proposal (its simulated effect, fee and the "
            "policy's decision) to pass to execute."
        )
        server.tool(name=row.tool, annotations=PREPARE, description=description)(_tool_for(row, propose))

    approval_of = asker(book)

    @server.tool(
        annotations=EXECUTE,
        description=(
            "Execute a proposal, once: the transaction is built and checked afresh, the policy decides again, "
            "the person is asked when the policy says so, then it is signed, sent and confirmed."
        ),
    )
    async def execute(
        proposal_id: Annotated[str, Field(max_length=64)],
        ctx: Context,
        approval: Annotated[ElicitationResult[Approve], Resolve(approval_of)],
    ) -> Annotated[CallToolResult, OutcomeOut]:
        try:
            proposal = book.find(proposal_id)
            approved = _approved(book, proposal, approval)
            book.claim(proposal_id)
            if approved:
                proposal.approved = True
                book.audit.append("approved", proposal=proposal_id)
            progress = _progress(ctx)
            executed = await anyio.to_thread.run_sync(book.execute, proposal, approved, progress)
            outcome, result = executed.outcome, executed.outcome.result
            return ok(
                OutcomeOut(
                    proposal_id=proposal_id,
                    status=executed.status,
                    signature=getattr(outcome, "signature", None) or result.get("signature"),
                    slot=getattr(outcome, "slot", None) or result.get("slot"),
                    effect=inert(proposal.summary, 300),
                    new_transaction=executed.status != "already_sent",
                    first_proposal_id=executed.first_proposal,
                )
            )
        except Exception as exc:
            return failure(exc)


def _tool_for(row: Action, propose: Callable[[AgentAsk], Awaitable[CallToolResult]]) -> Any:
    """`prepare_<action>`: its parameters from the row, its call a proposal of the row's intent."""

    async def tool(asset: str, **given: Any) -> CallToolResult:
        amount, everything = given.pop("amount", None), given.pop("all", False)
        return await propose(AgentAsk(row.name, asset, amount, everything, tuple(sorted(given.items()))))

    def parameter(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)

    parameters = [parameter("asset", Asset)]
    if row.amount and row.agent_all:
        parameters += [parameter("amount", Optional[DecimalText], None), parameter("all", bool, False)]
    elif row.amount:
        parameters.append(parameter("amount", DecimalText))
    for option in (o for o in row.options if o.agents):
        kind: Any = {"flag": bool, "switch": Optional[bool], "address": Optional[str]}[option.form]
        parameters.append(parameter(option.keyword, kind, False if option.form == "flag" else None))
    returns = Annotated[CallToolResult, ProposalOut]
    # The SDK reads the signature (and its annotations) as it reads a written one.
    tool.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
    tool.__name__ = row.tool
    return tool


def _approved(book: Book, proposal: Proposal, approval: ElicitationResult[Any]) -> bool:
    """Whether the person said yes; a no, a cancel or a client that cannot ask is a refusal here."""
    data = approval.data if isinstance(approval, AcceptedElicitation) else None
    if isinstance(data, CannotAsk):
        book.audit.append("refused", proposal=proposal.id, why="the client cannot elicit")
        raise Refused(
            "this write needs the person's approval and this client cannot ask for it (no elicitation); "
            "nothing was signed",
            kind="refused.approval_unavailable",
        )
    if data is None or (isinstance(data, Approve) and not data.approve):
        book.audit.append("declined", proposal=proposal.id, answer="no" if data is not None else approval.action)
        if proposal.state == "open":
            proposal.state = "declined"
        raise Declined("the person did not approve this write; nothing was signed", kind="declined")
    return isinstance(data, Approve)


def _progress(ctx: Context) -> Any:
    steps = iter(range(1, 1000))

    def report(stage: str, seen: str | None) -> None:
        message = f"{stage}: {seen or 'sent, not yet seen'}"
        try:
            run_in_loop(ctx.report_progress, next(steps), None, message)
        except Exception:  # a client gone away must not stop the wait for a sent transaction
            pass

    return report
