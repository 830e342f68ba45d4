"""A withdrawal: X (or everything) leaves the user's position, less the strategy's fee, for the user's token account."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from yieldcli.chain.guard.expected import Expected, flow
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
    if call is not None and layout is not None:
        target = call.position or ""
        before = holdings.positions.get(target, (None, None))[0]
        asked = replace(call, amount=intent.amount, everything=intent.amount is None, exclude_fees=intent.exclude_fees)
        gross, net = layout.withdrawal(before.balance if before else 0, asked)
        e.positions[target] = layout.after(before, KIND.call, gross)
        flow(e, holdings, call.token_account, mint, net)
    elif layout is None:
        x = intent.amount
        bound = (x, x) if x is not None and intent.exclude_fees else (1, x)
        e.bounds[None if mint == WSOL_MINT else mint] = bound
        e.unverified.append("the position's change and the withdrawal fee: the program's layout is not public")


def check_call(c: CallCheck) -> None:
    call, intent = c.call, c.intent
    c.expect("the destination", call.token_account, intent.token_account or c.associated(c.wallet, c.mint))
    if intent.amount is None and not call.everything:
        c.problems.append(f"withdraws {c.text(call.amount or 0)}, not everything")
    if intent.amount is not None and (call.everything or call.amount != intent.amount):
        c.problems.append(
            f"withdraws {'everything' if call.everything else c.text(call.amount or 0)}, not {c.text(intent.amount)}"
        )
    if intent.amount is not None and call.exclude_fees != intent.exclude_fees:
        c.problems.append("fees are " + ("excluded" if call.exclude_fees else "included") + ", not as you asked")


def head(intent: Intent, what: str, strategy: str) -> str:
    extras = [x for x, on in (("fees excluded", intent.exclude_fees), ("unwrapped to SOL", intent.unwrap)) if on]
    return f"withdraw {what} from {strategy} to {short(intent.wallet)}" + (f" ({', '.join(extras)})" if extras else "")


KIND = Kind(
    "withdraw",
    "withdraw",
    frozenset({"ata.create.own", "token.close.own_wsol"}),
    (
        ("your position (S, M)", "−gross: X, or X + fee(X) when fees are excluded, or all of it"),
        (
            "the token account you named, else your associated one (opened if missing, CreateIdempotent)",
            "+net: gross − fee(gross), or X when fees are excluded",
        ),
        (
            "every other token account of yours (your associated one when you named another)",
            "unchanged, none opened; an unwrap closes only the wrapped-SOL account paid",
        ),
        ("your SOL", "−fee (+net more for SOL)"),
    ),
    "`withdraw` X of M in S",
    expect,
    check_call,
    head,
    pays_out=True,
)
