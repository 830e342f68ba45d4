"""A deposit: X of the asset leaves the user's source account for the user's position in the strategy."""

from __future__ import annotations

from collections.abc import Mapping

from yieldcli.chain.guard.expected import Expected, flow, opened
from yieldcli.chain.guard.holdings import Holdings
from yieldcli.chain.guard.intent import Intent
from yieldcli.chain.guard.kinds.kind import CallCheck, Kind
from yieldcli.chain.guard.strategies import Call
from yieldcli.chain.guard.text import short
from yieldcli.tokens import WSOL_MINT


def expect(
    e: Expected, holdings: Holdings, call: Call | None, key: bytes | None, trusted_received: Mapping[str, int]
) -> None:
    intent, layout = holdings.intent, holdings.layout
    mint = str(intent.mint)
    # The amounts come from the request; the strategy call was matched to it in `calls.py`.
    amount = intent.amount if intent.amount is not None else (call.amount or 0 if call else holdings.held_total(mint))
    if call is not None and layout is not None and key is not None:
        target = call.position or ""
        before = holdings.positions.get(target, (None, None))[0]
        start = before or opened(intent.wallet, key, mint)
        e.positions[target] = layout.after(start, KIND.call, amount)
        flow(e, holdings, call.token_account, mint, -amount)
    else:
        e.mint_total[mint] = -amount
        e.elsewhere.update(trusted_received)
        if mint == WSOL_MINT:
            e.sol -= amount
        if layout is None:
            e.unverified.append("the position's change: the strategy program's account layout is not public")


def check_call(c: CallCheck) -> None:
    call, intent, holdings = c.call, c.intent, c.holdings
    if call.payer not in (c.wallet, intent.payer):
        c.problems.append(f"makes {short(call.payer or '?')} pay for the position, not you or your payer")
    # The source is the account the user named, else the associated account of the mint (of its own
    # token program): never another account of the user's, even one holding more (SOL wraps into it).
    source = intent.token_account or c.associated(c.wallet, c.mint)
    if call.token_account != source:
        whose = "another token account of yours" if call.token_account in holdings.tokens else "not yours"
        c.problems.append(
            f"takes from {short(call.token_account or '?')} ({whose}), not "
            + ("the token account you named " if intent.token_account else "your associated token account ")
            + short(source)
        )
    if intent.amount is not None and call.amount != intent.amount:
        c.problems.append(f"deposits {c.text(call.amount or 0)}, not {c.text(intent.amount)}")
    if intent.amount is None and c.mint != WSOL_MINT:
        held = holdings.held(call.token_account or "", holdings.before)
        if held is None or call.amount != held.amount:
            c.problems.append(f"deposits {c.text(call.amount or 0)}, not everything the account held")


def head(intent: Intent, what: str, strategy: str) -> str:
    return f"deposit {what} from {short(intent.wallet)} to {strategy}"


KIND = Kind(
    "deposit",
    "deposit",
    frozenset({"ata.create.own", "system.transfer.own", "token.sync_native.own"}),
    (
        (
            "the source: the token account you named, else your associated one (SOL wraps into it)",
            "−X (everything: all it held)",
        ),
        ("your position (S, M), as the program accounts it", "+X (opened at 0 if new)"),
        ("your SOL (wallet, token accounts and positions together)", "−fee (−X more for SOL)"),
        (
            "every other token account of yours (another of M, another wrapped-SOL one)",
            "unchanged; none opened but the wrapped-SOL one SOL wraps into (CreateIdempotent)",
        ),
        ("fee + rent of accounts you then own", "at most the cost cap"),
    ),
    "`deposit` X of M in S",
    expect,
    check_call,
    head,
    opens_position=True,
    trusted_transfers=True,
)
