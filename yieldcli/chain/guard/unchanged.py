"""What must not change unless the request needs it: the authorities over the user's token accounts, the
wallet's and payer's program and size, accounts the user's keys control; and, where the strategy
program's layout is not known, the rules that need none. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from yieldcli.chain.guard.holdings import Holdings, Inner, strategy_moves
from yieldcli.chain.guard.kinds import kind_of
from yieldcli.chain.guard.message import Resolved, lifetime_nonce
from yieldcli.chain.guard.text import amount_text, short, symbol
from yieldcli.chain.tx.state import State

_KIND_NAMES = {
    "delegated": "token account (you are its delegate or close authority)",
    "nonce": "nonce account",
    "stake": "stake account",
    "mint": "mint",
    "closable": "token account (someone else may close it)",
    "signer": "account of a key you sign with (not the wallet or the payer)",
}


def authorities(holdings: Holdings, decimals: Mapping[str, int]) -> list[str]:
    """No token account of the user gains a delegate, a new owner or close authority; the wallet and the
    payer keep their program and size."""
    wallet = holdings.intent.wallet
    diffs = []
    for address in sorted(holdings.tokens):
        was = holdings.held(address, holdings.before)
        state = holdings.after.get(address)
        now = state.token if state else None
        if now is None:
            continue
        name = symbol(now.mint)
        if now.owner != wallet:
            diffs.append(f"SetAuthority: your {name} account {short(address)} would belong to {short(now.owner)}")
            continue
        if now.delegate is not None and (
            was is None or now.delegate != was.delegate or now.delegated_amount > was.delegated_amount
        ):
            allowed = amount_text(now.delegated_amount, now.mint, decimals)
            diffs.append(f"Approve: {short(now.delegate)} may spend {allowed} of your {name}")
        if (
            was is not None
            and was.delegate not in (None, wallet)
            and was.delegated_amount
            and holdings.token_change(address) > 0
        ):
            # Someone else may spend from it already: what is paid in is theirs to take, up to their allowance.
            allowed = amount_text(was.delegated_amount, was.mint, decimals)
            diffs.append(
                f"your {name} account {short(address)} receives tokens, and {short(was.delegate)} may spend "
                f"{allowed} of it as its delegate"
            )
        if now.close_authority not in (None, wallet) and (was is None or now.close_authority != was.close_authority):
            diffs.append(f"SetAuthority: {short(now.close_authority)} may close your {name} account {short(address)}")
    for address in sorted(holdings.users):
        before, after = holdings.before.get(address), holdings.after.get(address)
        if (
            before is not None
            and after is not None
            and before.owner
            and (after.owner != before.owner or after.size != before.size)
        ):
            what = (
                f"assigned to program {short(after.owner)}"
                if after.owner != before.owner
                else f"given {after.size} bytes of data"
            )
            diffs.append(f"your {'wallet' if address == wallet else 'payer'} {short(address)} would be {what}")
    return diffs


def unwrapped_sol(holdings: Holdings, decimals: Mapping[str, int]) -> list[str]:
    """No SOL is left in the user's wrapped-SOL account unwrapped (sent in without SyncNative): it would
    count as the user's SOL and as no token, so neither comparison would see it move, and whoever may
    spend from that account (a delegate) could sync and take it."""
    diffs = []
    for address in sorted(holdings.tokens):
        before, after = holdings.before.get(address), holdings.after.get(address)
        now = _unwrapped(after)
        if now > _unwrapped(before):
            diffs.append(
                f"your wrapped-SOL account {short(address)} would hold {amount_text(now, None, decimals)} "
                "sent in without being wrapped (no SyncNative), not asked for"
            )
    return diffs


def _unwrapped(state: State | None) -> int:
    token = state.token if state is not None else None
    if state is None or token is None or not token.native:
        return 0
    return max(state.lamports - token.reserve - token.amount, 0)


def controlled_unchanged(holdings: Holdings, resolved: Resolved) -> list[str]:
    """Accounts the user's keys control stay exactly as they were; the nonce the user asked for may advance."""
    diffs = []
    nonce = holdings.intent.nonce if lifetime_nonce(resolved) == holdings.intent.nonce else None
    for address, kind in sorted(holdings.controlled.items()):
        before, after = holdings.before.get(address), holdings.after.get(address)
        if before == after:
            continue
        if (
            kind == "nonce"
            and address == nonce
            and after is not None
            and before is not None
            and (after.lamports, after.owner, after.size, after.data[:40])
            == (before.lamports, before.owner, before.size, before.data[:40])
        ):
            continue  # advanced, as asked: same lamports, program, size and authority
        diffs.append(f"your {_KIND_NAMES[kind]} {short(address)} changes, not asked for")
    return diffs


def without_layout(holdings: Holdings, resolved: Resolved, inner: Inner, decimals: Mapping[str, int]) -> list[str]:
    """The rules that need no layout: no payout on a deposit, payouts only to the user or the named
    recipient, at most one writable account of the program holding the user's key."""
    intent = holdings.intent
    diffs = []
    owned = holdings.owned
    recipient = intent.funds_recipient if kind_of(intent).recipient else None
    for move in strategy_moves(resolved, inner, intent.strategy_program):
        if move.source in owned:
            continue
        what = amount_text(
            move.amount, None if move.lamports else holdings.mint_of(move.source) or intent.mint, decimals
        )
        if not kind_of(intent).pays_out:
            diffs.append(
                f"instruction {move.top_level + 1}: the strategy program pays {what} to {short(move.destination)}"
                f" on a {intent.action}"
            )
        elif move.destination not in owned and (
            recipient is None or holdings.token_owner(move.destination) != recipient
        ):
            diffs.append(
                f"instruction {move.top_level + 1}: the strategy program pays {what} to "
                f"{short(move.destination)}, not to you"
            )
    if len(holdings.holding_key) > 1:
        diffs.append(
            f"{len(holdings.holding_key)} accounts of the strategy program hold your key "
            f"({', '.join(short(a) for a in sorted(holdings.holding_key))}); a request touches at most one"
        )
    return diffs
