"""What an action may change, filled in with amounts (`Expected`), and the pieces every kind of action
(`kinds/`) builds it from: a flow into or out of a token account, a position opened at 0, the rent of
a recipient's new account. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from yieldcli.chain.guard.holdings import Holdings
from yieldcli.chain.guard.strategies import PositionView
from yieldcli.tokens import WSOL_MINT


@dataclass
class Expected:
    """The action's table filled in with amounts: every change the user's accounts may see."""

    sol: int = 0  # lamports, over every account the user owns or has a claim on
    cost: int = 0  # what leaves the user's SOL for the fee and rent: within the cost cap
    tokens: dict[str, int] = field(default_factory=dict)  # the user's token account -> its change
    positions: dict[str, PositionView | None] = field(default_factory=dict)  # position -> its state after
    elsewhere: dict[str, int] = field(default_factory=dict)  # a token account not the user's -> what it gains
    mint_total: dict[str, int] = field(default_factory=dict)  # mint -> change over the user's accounts
    # Without the program's layout, what a payout brings is known only within the request's bounds:
    # mint (None: SOL) -> (least, most) change over the user's accounts.
    bounds: dict[str | None, tuple[int, int | None]] = field(default_factory=dict)
    # Wrapped SOL is SOL, but which form it takes is part of the request: the change of the user's
    # wrapped-SOL balance (least, most), and the account an unwrap must leave holding none.
    wrapped: tuple[int, int] = (0, 0)
    unwrapped: str | None = None
    rows: list[str] = field(default_factory=list)  # the table as shown: "your USDC: -10 USDC"
    unverified: list[str] = field(default_factory=list)


def opened(wallet: str, key: bytes, mint: str) -> PositionView:
    return PositionView(wallet, key, mint, 0, 0)


def flow(e: Expected, holdings: Holdings, account: str | None, mint: str, amount: int) -> None:
    """`amount` of `mint` into (or, negative, out of) the user's token account: wrapped SOL moves lamports."""
    if mint == WSOL_MINT:
        e.sol += amount
        intent = holdings.intent
        if amount < 0:
            e.wrapped = (amount, 0)  # a deposit spends wrapped SOL first, and wraps no more than it needs
        elif intent.unwrap:  # only a withdrawal asks to unwrap
            e.wrapped, e.unwrapped = (-holdings.held_total(WSOL_MINT), 0), account
        else:
            e.wrapped = (amount, amount)
        return
    if account is not None:
        e.tokens[account] = e.tokens.get(account, 0) + amount


def recipient_rent(e: Expected, holdings: Holdings, pays: bool) -> None:
    """Closing to a recipient the user named may open its token account, at the user's cost."""
    recipient = holdings.intent.funds_recipient
    if recipient is None or recipient == holdings.intent.wallet:
        return
    for address, state in holdings.after.items():
        if (
            state is not None
            and state.token is not None
            and state.token.owner == recipient
            and holdings.before.get(address) is None
        ):
            e.sol -= state.lamports if pays else 0
            e.cost += state.lamports if pays else 0
