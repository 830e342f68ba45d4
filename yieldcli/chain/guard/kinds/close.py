"""Closing a fund account: the position is closed, what it held goes to the user (or the recipient named)."""

from __future__ import annotations

from collections.abc import Mapping

from yieldcli.chain.guard.expected import Expected, flow, recipient_rent
from yieldcli.chain.guard.holdings import Holdings
from yieldcli.chain.guard.intent import Intent
from yieldcli.chain.guard.kinds.kind import CallCheck, Kind
from yieldcli.chain.guard.strategies import Call
from yieldcli.chain.guard.text import short, symbol
from yieldcli.tokens import WSOL_MINT


def expect(
    e: Expected, holdings: Holdings, call: Call | None, key: bytes | None, trusted_received: Mapping[str, int]
) -> None:
    intent, layout = holdings.intent, holdings.layout
    mint, pays = str(intent.mint), intent.payer_is_users
    if call is not None and layout is not None:
        target = call.position or ""
        before = holdings.positions.get(target, (None, None))[0]
        e.positions[target] = None
        remainder = before.balance if before else 0
        if call.token_account in holdings.tokens or call.token_account == intent.wallet:
            flow(e, holdings, call.token_account, mint, remainder)
        elif remainder:
            e.elsewhere[call.token_account or ""] = remainder
        recipient_rent(e, holdings, pays)
    elif layout is None:
        recipient_rent(e, holdings, pays)
        e.bounds[None if mint == WSOL_MINT else mint] = (0, None)
        e.unverified.append("what the position held: the program's layout is not public")


def check_call(c: CallCheck) -> None:
    call, intent, holdings = c.call, c.intent, c.holdings
    recipient = intent.funds_recipient
    if recipient is None:
        c.expect("the recipient", call.token_account, intent.token_account or c.associated(c.wallet, c.mint))
        return
    # The recipient named is paid; with nothing to pay, the service may name the user's own account.
    closing = holdings.positions.get(call.position or "", (None, None))[0]
    empty = closing is None or closing.balance == 0
    allowed = {recipient} | ({c.associated(c.wallet, c.mint)} if empty else set())
    owners = {recipient} | ({c.wallet} if empty else set())
    if call.token_account not in allowed and holdings.token_owner(call.token_account) not in owners:
        c.problems.append(f"pays {short(call.token_account or '?')}, not the recipient {short(recipient)} you named")
    elif holdings.others_may_take(call.token_account):
        c.problems.append(
            f"pays {short(call.token_account or '?')}, a token account of the recipient that someone "
            "else may spend from or close"
        )


def head(intent: Intent, what: str, strategy: str) -> str:
    asset = f" {symbol(intent.mint)}" if intent.mint else ""
    return f"close the{asset} fund account of {short(intent.wallet)} in {strategy}"


KIND = Kind(
    "close-account",
    "close",
    frozenset({"ata.create.own", "ata.create.recipient"}),
    (
        ("your position (S, M)", "closed"),
        ("your token account, or the recipient's you named", "+what the position held"),
        ("your SOL", "−fee (the position's rent comes back to your wallet)"),
        (
            "the recipient's new token account, when you named one",
            "opened (CreateIdempotent) only when the close pays into it: its rent, within the cost cap",
        ),
    ),
    "`close-account` of M in S",
    expect,
    check_call,
    head,
    recipient=True,
    pays_out=True,
    closes=True,
)
