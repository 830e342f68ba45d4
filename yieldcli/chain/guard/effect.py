"""The exact effect: what the simulation did to everything the user owns or has a claim on, against the
action's table (its kind in `kinds/`). Anything not in the table must be unchanged; each difference is named
with its account and its amount in token units, one mint at a time (amounts of different mints are
never added).

SOL is counted over every account whose lamports are the user's or the user's claim: the wallet, the
payer when we sign for it, the wallet's token accounts and its positions. Rent moved from the wallet
into an account the user then owns is no loss; rent that leaves for anyone else is. Wrapped SOL is
inside those lamports, so SOL and wrapped SOL are one balance. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from yieldcli.chain.guard.expected import Expected
from yieldcli.chain.guard.holdings import Holdings
from yieldcli.chain.guard.kinds import kind_of
from yieldcli.chain.guard.text import amount_text, short, signed, symbol
from yieldcli.chain.guard.unchanged import authorities, controlled_unchanged, unwrapped_sol, without_layout
from yieldcli.tokens import WSOL_MINT

if TYPE_CHECKING:
    from yieldcli.chain.guard.calls import Calls
    from yieldcli.chain.guard.holdings import Inner
    from yieldcli.chain.guard.message import Resolved


def compare_effect(
    holdings: Holdings,
    calls: Calls,
    resolved: Resolved,
    inner: Inner,
    *,
    fee: int,
    decimals: Mapping[str, int],
    trusted_received: Mapping[str, int],
) -> tuple[Expected, list[str]]:
    """The expected effect and every difference from the observed one."""
    expected = expect(holdings, calls, fee=fee, decimals=decimals, trusted_received=trusted_received)
    diffs: list[str] = []
    diffs += _tokens(holdings, expected, decimals)
    diffs += _positions(holdings, expected, decimals)
    diffs += _sol(holdings, expected, decimals)
    diffs += unwrapped_sol(holdings, decimals)
    diffs += authorities(holdings, decimals)
    diffs += controlled_unchanged(holdings, resolved)
    if holdings.layout is None:
        diffs += without_layout(holdings, resolved, inner, decimals)
    return expected, diffs


def expect(
    holdings: Holdings,
    calls: Calls,
    *,
    fee: int,
    decimals: Mapping[str, int],
    trusted_received: Mapping[str, int],
) -> Expected:
    intent = holdings.intent
    e = Expected()
    pays = intent.payer_is_users
    e.sol = -fee if pays else 0
    e.cost = fee if pays else 0
    for address in holdings.owned:
        # The rent in an account that becomes the user's is the user's cost when the user pays, or a gift
        # from the payer who does (lamports it held before are already counted as it was).
        rent = holdings.rent_in(address)
        if pays:
            e.cost += rent
        else:
            e.sol += rent
    kind = kind_of(intent)
    if intent.mint is not None and kind.expect is not None:
        # What the action itself changes: its kind's own rows (`kinds/`), filled in with amounts.
        kind.expect(e, holdings, calls.call, calls.strategy_key, trusted_received)
    e.rows = _rows(holdings, e, fee if pays else 0, decimals)
    return e


def _rows(holdings: Holdings, e: Expected, fee: int, decimals: Mapping[str, int]) -> list[str]:
    rows = [
        f"your SOL: {signed(e.sol, None, decimals)}" + (f" (fee {amount_text(fee, None, decimals)})" if fee else "")
    ]
    for account, change in sorted(e.tokens.items()):
        rows.append(
            f"your {symbol(holdings.mint_of(account) or '?')} account {short(account)}: "
            f"{signed(change, holdings.mint_of(account), decimals)}"
        )
    for mint, change in sorted(e.mint_total.items()):
        rows.append(f"your {symbol(mint)}: {signed(change, mint, decimals)}")
    for position, after in sorted(e.positions.items(), key=lambda kv: kv[0]):
        rows.append(
            f"your position {short(position)}: "
            + ("closed" if after is None else f"balance {amount_text(after.balance, after.mint, decimals)}")
        )
    return rows


def _tokens(holdings: Holdings, e: Expected, decimals: Mapping[str, int]) -> list[str]:
    """Each of the user's token accounts changes by exactly its row (0 when it has none)."""
    diffs = []
    totals: dict[str, int] = {}
    for address in sorted(holdings.tokens):
        mint = holdings.mint_of(address)
        if mint is None:
            continue
        change = holdings.token_change(address)
        totals[mint] = totals.get(mint, 0) + change
        if mint == WSOL_MINT:
            continue  # its value is inside the lamports the SOL rule counts; its form is checked below
        if mint in e.mint_total or mint in e.bounds:
            continue  # only the total of this mint is known (no layout, or a trusted plain transfer)
        want = e.tokens.get(address, 0)
        if change != want:
            what = f"your {symbol(mint)} account {short(address)}"
            if want:
                diffs.append(
                    f"{what}: expected {signed(want, mint, decimals)}, simulated {signed(change, mint, decimals)}"
                )
            else:
                diffs.append(f"{what} changes by {signed(change, mint, decimals)}, not asked for")
    least, most = e.wrapped
    wrapped = totals.get(WSOL_MINT, 0)
    if not least <= wrapped <= most:
        diffs.append(
            f"your wrapped SOL: expected {_bound(least, most, WSOL_MINT, decimals)}, "
            f"simulated {signed(wrapped, WSOL_MINT, decimals)}"
        )
    if e.unwrapped is not None and holdings.after.get(e.unwrapped) is not None:
        # Unwrapping closes the account: left open (or opened again) it keeps rent nobody asked it to.
        held = holdings.held(e.unwrapped, holdings.after)
        what = (
            f"still holds {amount_text(held.amount, WSOL_MINT, decimals)}" if held and held.amount else "is left open"
        )
        diffs.append(f"your wrapped-SOL account {short(e.unwrapped)} {what}: not unwrapped as asked")
    for mint, want in sorted(e.mint_total.items()):
        got = totals.get(mint, 0)
        if got != want:
            diffs.append(
                f"your {symbol(mint)}: expected {signed(want, mint, decimals)}, simulated {signed(got, mint, decimals)}"
            )
    for mint, (low, high) in sorted((m, b) for m, b in e.bounds.items() if m is not None):
        got = totals.get(mint, 0)
        if got < low or (high is not None and got > high):
            diffs.append(
                f"your {symbol(mint)}: expected {_bound(low, high, mint, decimals)}, "
                f"simulated {signed(got, mint, decimals)}"
            )
    for address, want in sorted(e.elsewhere.items()):
        before, after = holdings.before.get(address), holdings.after.get(address)
        got = (after.token.amount if after and after.token else 0) - (
            before.token.amount if before and before.token else 0
        )
        mint = (after.token.mint if after and after.token else None) or holdings.intent.mint
        if got != want or mint != holdings.intent.mint:
            diffs.append(
                f"{short(address)}: expected {signed(want, holdings.intent.mint, decimals)}, "
                f"simulated {signed(got, mint, decimals)}"
            )
    return diffs


def _positions(holdings: Holdings, e: Expected, decimals: Mapping[str, int]) -> list[str]:
    """Every position of the user stays as it was, but the one the request targets, which becomes its row."""
    diffs = []
    for address in sorted(set(holdings.positions) | set(e.positions)):
        before, after = holdings.positions.get(address, (None, None))
        want = e.positions.get(address, before)
        if after == want:
            continue
        view = before or after or want
        name = f"your {symbol(view.mint) if view else ''} position {short(address)}".replace("  ", " ")
        if want is None:
            diffs.append(
                f"{name} is closed, not asked for"
                if address not in e.positions or after is not None
                else f"{name} is not closed"
            )
            if after is not None and address in e.positions:
                continue
        elif after is None:
            diffs.append(
                f"{name}: expected balance {amount_text(want.balance, want.mint, decimals)}, "
                "simulated closed" + ("" if before else " (never opened)")
            )
        elif before is None and address not in e.positions:
            diffs.append(f"{name} is opened with {amount_text(after.balance, after.mint, decimals)}, not asked for")
        else:
            diffs.append(
                f"{name}: expected balance {amount_text(want.balance, want.mint, decimals)} and deposited "
                f"{amount_text(want.deposited, want.mint, decimals)}, simulated "
                f"{amount_text(after.balance, after.mint, decimals)} and "
                f"{amount_text(after.deposited, after.mint, decimals)}"
                + ("" if after.user == want.user else f", belonging to {short(after.user)}")
            )
    return list(dict.fromkeys(diffs))


def _bound(least: int, most: int | None, mint: str | None, decimals: Mapping[str, int]) -> str:
    if most is None:
        return f"at least {signed(least, mint, decimals)}"
    if least == most:
        return signed(least, mint, decimals)
    return f"{signed(least, mint, decimals)} to {signed(most, mint, decimals)}"


def _sol(holdings: Holdings, e: Expected, decimals: Mapping[str, int]) -> list[str]:
    got = sum(holdings.gain(a) for a in holdings.owned)
    diffs = []
    if None in e.bounds:
        least, most = e.bounds[None]
        if got - e.sol < least or (most is not None and got - e.sol > most):
            diffs.append(
                f"your SOL: expected {signed(e.sol, None, decimals)} and "
                f"{_bound(least, most, None, decimals)}, simulated {signed(got, None, decimals)}"
            )
    elif got != e.sol:
        takers = [a for a in sorted(holdings.after) if a not in holdings.owned and holdings.gain(a) > 0]
        to = f" ({', '.join(short(a) for a in takers[:3])} gain SOL)" if takers and got < e.sol else ""
        diffs.append(f"your SOL: expected {signed(e.sol, None, decimals)}, simulated {signed(got, None, decimals)}{to}")
    intent = holdings.intent
    if intent.payer != intent.wallet and intent.payer_is_users:
        # The payer's SOL and the wallet's are one sum above; the payer itself gives no more than
        # the fee and the rent it pays (a sponsor's SOL never becomes the wallet's unasked).
        spent = -holdings.gain(intent.payer)
        if spent > e.cost:
            diffs.append(
                f"the payer {short(intent.payer)} pays {amount_text(spent, None, decimals)}, more than the fee "
                f"and rent ({amount_text(e.cost, None, decimals)})"
            )
    if e.cost > holdings.intent.max_sol_cost:
        diffs.append(
            f"fee and rent come to {amount_text(e.cost, None, decimals)}, more than the "
            f"{amount_text(holdings.intent.max_sol_cost, None, decimals)} allowed"
        )
    return diffs
