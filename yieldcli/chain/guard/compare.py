"""The guard's verdict: does the transaction do exactly what the user asked, and nothing else?

From the request (`Intent`) and the action's table (`actions.py`) comes the expected effect; from a
simulation of the exact transaction, every account it may write read before and returned after, the
observed one. Three proofs must all hold, and an empty list of differences is the only "yes":
- every instruction that uses the user's authority is one the action needs (`instructions.py`);
- every instruction of the pinned strategy program is decoded and matched to the request (`calls.py`);
- the effect on everything the user owns or has a claim on is exactly the table (`effect.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from yieldcli.amounts import format_units
from yieldcli.chain.guard.calls import Calls, match_calls
from yieldcli.chain.guard.effect import compare_effect
from yieldcli.chain.guard.holdings import Holdings, Inner, strategy_moves
from yieldcli.chain.guard.instructions import Context, verdicts
from yieldcli.chain.guard.intent import Check, Intent, Verdict
from yieldcli.chain.guard.kinds import kind_of
from yieldcli.chain.guard.message import Resolved, token_accounts_opened
from yieldcli.chain.guard.sources import account_rules, asked_account
from yieldcli.chain.guard.strategies import Layout, layout_for
from yieldcli.chain.guard.text import amount_text, short, signed, symbol
from yieldcli.chain.tx.state import State
from yieldcli.solana import programs
from yieldcli.solana.token_layout import MintInfo, issuer_rules, refusals
from yieldcli.tokens import WSOL_MINT


def compare(
    intent: Intent,
    before: Mapping[str, State | None],
    after: Mapping[str, State | None],
    *,
    fee: int,
    resolved: Resolved,
    decimals: Mapping[str, int] | None = None,
    inner: Inner | None = None,
    priority_fee: int = 0,
    precompile_fee: int = 0,
    mints: Mapping[str, MintInfo] | None = None,
) -> Check:
    """The verdict on a simulated transaction; `before`/`after` cover every account it may write,
    `resolved` is its message and `inner` the simulation's inner instructions. `mints` are the mint
    accounts read from the chain: the request's mint says which token program it is on (SPL Token when
    it was not read) and whether anyone else may move its tokens."""
    decimals = dict(decimals or {})
    inner = dict(inner or {})
    mints = dict(mints or {})
    layout = layout_for(intent.strategy_program)
    intent = _closed_mint(intent, resolved, layout)
    asset = mints.get(intent.mint or "")
    token_program = asset.program if asset is not None else programs.TOKEN_PROGRAM
    holdings = Holdings(intent, before, after, layout)
    calls = match_calls(intent, resolved, holdings, layout, token_program)
    context = _context(intent, holdings, resolved, mints, token_program, calls, layout)
    verdicts_ = tuple(verdicts(resolved, context, calls.verdicts))
    diffs = [v.reason for v in verdicts_ if not v.ok]
    kind = kind_of(intent)
    if asset is not None and kind.asset:
        # A mint that cannot move (paused, non-transferable, new accounts frozen) is refused with its reason;
        # the issuer's own rules (a permanent delegate, a transfer hook) are the asset's: shown, not refused.
        diffs += [f"the mint {short(str(intent.mint))} {reason}" for reason in refusals(asset)]
    unmatched = not any(not v.ok for v in calls.verdicts.values()) and not _trusted(intent, verdicts_)
    if kind.asset and layout is not None and calls.call is None and unmatched:
        diffs.append(f"no strategy {intent.action} instruction: the transaction does not {intent.action}")
    received = _trusted_received(intent, holdings, verdicts_)
    expected, effect_diffs = compare_effect(
        holdings, calls, resolved, inner, fee=fee, decimals=decimals, trusted_received=received
    )
    diffs += effect_diffs
    diffs += account_rules(holdings, calls, resolved, token_program)
    # The allowance for a fee nobody asked for binds all of it: the priority fee and the signatures
    # precompile instructions make the network charge beyond the message's own.
    unasked = priority_fee + precompile_fee
    if intent.max_priority_fee is not None and unasked > intent.max_priority_fee:
        what = f"a priority fee of {amount_text(priority_fee, None, decimals)}"
        if precompile_fee:
            what = (
                f"a fee of {amount_text(unasked, None, decimals)} beyond the message's signatures (priority "
                f"{amount_text(priority_fee, None, decimals)}, precompile signatures "
                f"{amount_text(precompile_fee, None, decimals)})"
            )
        diffs.append(
            f"{what} that you did not ask for "
            f"(more than the {amount_text(intent.max_priority_fee, None, decimals)} accepted when you set none)"
        )
    if received:
        want = intent.amount if intent.amount is not None else holdings.held_total(str(intent.mint))
        if sum(received.values()) != want:
            diffs.append(
                f"expected {signed(-want, intent.mint, decimals)} to trusted destinations, simulated "
                f"{signed(-sum(received.values()), intent.mint, decimals)}"
            )
    changes = _changes(holdings, decimals)
    rent = sum(holdings.rent_in(a) for a in holdings.owned)
    observed = {
        "sol": sum(holdings.gain(a) for a in holdings.owned),
        "tokens": _token_totals(holdings),
        "fee": fee,
        "fee_detail": {
            "signatures": fee - priority_fee - precompile_fee,
            "precompile_signatures": precompile_fee,
            "priority": priority_fee,
            "total": fee,
        },
        "rent": rent,
        "changes": changes,
        "positions": [
            {"address": a, "before": _view(b), "after": _view(c)} for a, (b, c) in sorted(holdings.positions.items())
        ],
        "accounts": [_account(holdings, a) for a in sorted(after) if before.get(a) != after.get(a)],
        "strategy_transfers": [
            {
                "instruction": m.top_level,
                "from": m.source,
                "to": m.destination,
                "amount": m.amount,
                "asset": "SOL" if m.lamports else "token",
            }
            for m in strategy_moves(resolved, inner, intent.strategy_program)
        ],
    }
    expected_dict = intent.to_dict() | {"effect": expected.rows}
    return Check(
        expected_dict,
        observed,
        tuple(dict.fromkeys(diffs)),
        summary(intent, fee, rent, decimals, changes, priority_fee, precompile_fee),
        verdicts_,
        _verified(intent, holdings, verdicts_, received, decimals),
        tuple(expected.unverified) + _rules(intent, asset),
    )


def _rules(intent: Intent, asset: MintInfo | None) -> tuple[str, ...]:
    """The asset's issuer rules, one line each, shown with the review (never a reason to refuse)."""
    if asset is None or not kind_of(intent).asset:
        return ()
    return tuple(f"{symbol(str(intent.mint))}: {rule}" for rule in issuer_rules(asset))


def _closed_mint(intent: Intent, resolved: Resolved, layout: Layout | None) -> Intent:
    """An action on a position named by its address (a close by `--account`) names no mint: the one
    call of its kind's instruction gives the mint checked (its position must still be the wallet's,
    derived from that mint and its strategy)."""
    wanted = kind_of(intent).call
    if intent.mint is not None or not wanted or layout is None:
        return intent
    closes = [
        call
        for i in range(len(resolved.instructions))
        if resolved.program(i) == intent.strategy_program
        and (call := layout.decode(resolved.instructions[i][2], resolved.accounts(i))).kind == wanted
    ]
    return replace(intent, mint=closes[0].mint) if len(closes) == 1 and closes[0].mint else intent


def _context(
    intent: Intent,
    holdings: Holdings,
    resolved: Resolved,
    mints: Mapping[str, MintInfo],
    token_program: str,
    calls: Calls,
    layout: Layout | None,
) -> Context:
    wsol = {a for a in holdings.tokens if holdings.mint_of(a) == WSOL_MINT}
    programs_of = {mint: info.program for mint, info in mints.items()}
    opened = token_accounts_opened(resolved, intent.wallet, programs_of)
    wsol |= {a for a, m in opened.items() if m == WSOL_MINT}
    owned = frozenset(holdings.users | holdings.tokens | set(opened))
    return Context(
        intent.action,
        intent.wallet,
        intent.payer,
        intent.strategy_program,
        intent.nonce,
        owned,
        frozenset(owned | set(holdings.controlled) | set(holdings.positions) | holdings.holding_key),
        frozenset(wsol),
        intent.funds_recipient,
        # Trust is per strategy, and only for what `yield` asked the service for: none named, none applies.
        intent.mint if intent.strategy and intent.trust_file else None,
        intent.trusted,
        _trust_cap(intent, holdings),
        intent.mint,
        token_program,
        intent.other_signers,
        *_pays_into(intent, holdings, calls, layout, token_program),
    )


def _pays_into(
    intent: Intent, holdings: Holdings, calls: Calls, layout: Layout | None, token_program: str
) -> tuple[str | None, int | None, frozenset[str]]:
    """From the request and the chain before it, never the simulation: the wrapped-SOL account a SOL deposit
    wraps into and what it lacks of the deposit there, and the token accounts the action pays into."""
    kind, asked = kind_of(intent), asked_account(holdings, calls, token_program)
    if asked is None:
        return None, None, frozenset()
    if not kind.pays_out:
        if intent.mint != WSOL_MINT:
            return None, None, frozenset()
        amount = intent.amount if intent.amount is not None else (calls.call.amount if calls.call else None)
        held = holdings.held(asked, holdings.before)
        lacks = None if amount is None else max(amount - (held.amount if held else 0), 0)
        return asked, lacks, frozenset({asked})
    if kind.closes and layout is not None:
        # A close pays its destination only what the position still holds: an empty one pays no one.
        position = holdings.positions.get(calls.call.position or "", (None, None))[0] if calls.call else None
        return None, None, frozenset({asked} if position is not None and position.balance > 0 else ())
    return None, None, frozenset({asked})


def _trust_cap(intent: Intent, holdings: Holdings) -> int:
    if not kind_of(intent).trusted_transfers or intent.mint is None:
        return 0
    return intent.amount if intent.amount is not None else holdings.held_total(intent.mint)


def _trusted(intent: Intent, verdicts_: tuple[Verdict, ...]) -> bool:
    return kind_of(intent).trusted_transfers and any(
        v.ok and "Transfer" in v.kind and v.program != intent.strategy_program for v in verdicts_
    )


def _trusted_received(intent: Intent, holdings: Holdings, verdicts_: tuple[Verdict, ...]) -> dict[str, int]:
    """What trusted destinations of this deposit's mint gained, read from the chain (their mint too)."""
    if not _trusted(intent, verdicts_):
        return {}
    found = {}
    for address, mint in intent.trusted:
        before, after = holdings.before.get(address), holdings.after.get(address)
        if after is None or after.token is None or after.token.mint != mint or mint != intent.mint:
            continue
        gained = after.token.amount - (before.token.amount if before and before.token else 0)
        if gained:
            found[address] = gained
    return found


def _token_totals(holdings: Holdings) -> dict[str, int]:
    totals: dict[str, int] = {}
    for address in holdings.tokens:
        mint = holdings.mint_of(address)
        if mint is not None:
            totals[mint] = totals.get(mint, 0) + holdings.token_change(address)
    return {m: d for m, d in totals.items() if d}


def _changes(holdings: Holdings, decimals: Mapping[str, int]) -> list[dict[str, Any]]:
    """Shown apart: SOL in the wallet and payer, and each token (wrapped SOL by that name)."""
    native = sum(holdings.gain(a) for a in holdings.users)
    changes = [{"asset": "SOL", "mint": None, "change": native, "text": signed(native, None, decimals)}]
    changes += [
        {
            "asset": "wrapped SOL" if m == WSOL_MINT else symbol(m),
            "mint": m,
            "change": d,
            "text": signed(d, m, decimals) + (" (wrapped)" if m == WSOL_MINT else ""),
        }
        for m, d in sorted(_token_totals(holdings).items())
    ]
    return changes


def _view(view: Any) -> dict[str, Any] | None:
    if view is None:
        return None
    return {
        "user": view.user,
        "strategy_key": view.strategy_key.hex(),
        "mint": view.mint,
        "deposited": view.deposited,
        "balance": view.balance,
    }


def _account(holdings: Holdings, address: str) -> dict[str, Any]:
    def side(state: State | None) -> dict[str, Any] | None:
        if state is None:
            return None
        token = state.token
        return {
            "lamports": state.lamports,
            "token": None
            if token is None
            else {
                "mint": token.mint,
                "owner": token.owner,
                "amount": token.amount,
                "delegate": token.delegate,
                "delegated_amount": token.delegated_amount,
                "close_authority": token.close_authority,
            },
        }

    return {
        "address": address,
        "user": address in holdings.owned,
        "controlled": holdings.controlled.get(address),
        "lamports_change": holdings.gain(address),
        "before": side(holdings.before.get(address)),
        "after": side(holdings.after.get(address)),
    }


def _verified(
    intent: Intent,
    holdings: Holdings,
    verdicts_: tuple[Verdict, ...],
    received: Mapping[str, int],
    decimals: Mapping[str, int],
) -> tuple[str, ...]:
    pinned = intent.strategy_program
    layout = holdings.layout
    facts = [
        f"the strategy program trusted is {pinned} (pinned for this cluster, not taken from the service)"
        if pinned
        else "no strategy program is trusted: nothing may move value to anyone else"
    ]
    if layout is not None:
        facts.append(f"its instructions decoded and matched to your request ({layout.name}'s layout)")
    facts.append(f"{len(verdicts_)} instruction(s), each one an allowed program and kind where it uses your authority")
    facts.append(
        f"your accounts: {len(holdings.users | holdings.tokens)} (wallet, payer, token accounts), "
        f"{len(holdings.positions)} position(s), and {len(holdings.controlled)} more your keys control: "
        "each changes exactly as the request says, or not at all"
    )
    if received:
        moved = ", ".join(f"{amount_text(n, intent.mint, decimals)} to {short(a)}" for a, n in received.items())
        facts.append(f"plain transfer(s) to destinations you trust for this strategy on this cluster: {moved}")
    return tuple(facts)


def summary(
    intent: Intent,
    fee: int,
    rent: int,
    decimals: Mapping[str, int] | None = None,
    changes: Sequence[Mapping[str, Any]] = (),
    priority_fee: int = 0,
    precompile_fee: int = 0,
) -> str:
    """One line, such as
    `deposit 10 USDC from 5PJ1…Vr9k to strategy X; fee 0.000005551 SOL (priority 0.000000551); rent 0.00203928 SOL`."""
    decimals = decimals or {}
    what = "everything" if intent.amount is None else amount_text(intent.amount, intent.mint, decimals)
    if intent.amount is None and intent.mint:
        what = f"all {symbol(intent.mint)}"
    strategy = f"strategy {intent.strategy}" if intent.strategy else "the strategy"
    kind = kind_of(intent)
    if kind.head is not None:
        head = kind.head(intent, what, strategy)
    else:
        seen = ", ".join(c["text"] for c in changes if c["change"]) or "no change"
        head = f"transaction for {short(intent.wallet)}: {seen}"
    beyond = [f"priority {format_units(priority_fee, 9, min_fraction=0)}"] if priority_fee else []
    beyond += [f"precompile signatures {format_units(precompile_fee, 9, min_fraction=0)}"] if precompile_fee else []
    parts = [head, f"fee {amount_text(fee, None, decimals)}" + (f" ({', '.join(beyond)})" if beyond else "")]
    if rent:
        parts.append(f"rent {amount_text(rent, None, decimals)}")
    return "; ".join(parts)
