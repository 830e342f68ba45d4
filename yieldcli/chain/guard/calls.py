"""Every instruction of the pinned strategy program, decoded and matched to the request.

An action needs exactly one instruction of its kind (a deposit's `deposit`, a withdrawal's `withdraw`, a
close's `close`) whose user, mint, strategy, position, vault and token account are the ones the request
implies, the addresses derived here, never read from the answer; no other instruction of that program may
stand beside it. A transaction with no stated action may not touch the user's positions at all. Where the
program's layout is not known (mainnet), each instruction is listed as not decoded and the effect check
applies the rules that need no layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solders.pubkey import Pubkey

from yieldcli.chain.guard.holdings import Holdings
from yieldcli.chain.guard.intent import Intent, Verdict
from yieldcli.chain.guard.kinds import CallCheck, kind_of
from yieldcli.chain.guard.message import Resolved
from yieldcli.chain.guard.strategies import Call, Layout
from yieldcli.chain.guard.text import short
from yieldcli.solana import programs


@dataclass
class Calls:
    """The verdict on each strategy instruction and the one call that carries the request, if any."""

    verdicts: dict[int, Verdict] = field(default_factory=dict)
    call: Call | None = None  # the matched call (its amount, position and token account)
    strategy_key: bytes | None = None  # the strategy it targets


def match_calls(
    intent: Intent,
    resolved: Resolved,
    holdings: Holdings,
    layout: Layout | None,
    token_program: str = programs.TOKEN_PROGRAM,
) -> Calls:
    """`token_program`: the program that owns the request's mint, as the chain says (its associated
    token accounts are derived with it, and the strategy's calls must name it)."""
    pinned = intent.strategy_program
    found = Calls()
    indexes = [i for i in range(len(resolved.instructions)) if pinned is not None and resolved.program(i) == pinned]
    if layout is None:
        for i in indexes:
            found.verdicts[i] = Verdict(
                i,
                str(pinned),
                "strategy program",
                True,
                "the strategy's pinned program; its layout is not public, so what it does is checked only "
                "where no layout is needed",
            )
        return found
    wanted = kind_of(intent).call or None  # the instruction its kind needs; none for a plain transaction
    decoded = {i: layout.decode(resolved.instructions[i][2], resolved.accounts(i)) for i in indexes}
    of_kind = [i for i, c in decoded.items() if c.kind == wanted]
    for i, call in decoded.items():
        key = _strategy_key(call, holdings)
        named = _named(intent, layout, call, key)

        def verdict(ok: bool, reason: str, *, index: int = i, kind: str = call.kind, named: Any = named) -> Verdict:
            return Verdict(index, str(pinned), f"strategy {kind}", ok, reason, strategy=named)

        if wanted is None:
            mine = call.user == intent.wallet or call.position in holdings.positions
            found.verdicts[i] = (
                verdict(
                    False,
                    f"instruction {i + 1}: the strategy's {call.kind} of your position",
                )
                if mine
                else verdict(True, f"the strategy's {call.kind} for {short(call.user or '?')}: not your position")
            )
            continue
        if call.malformed is not None:
            found.verdicts[i] = verdict(
                False, f"instruction {i + 1}: not an instruction of the strategy program ({call.malformed})"
            )
        elif call.kind != wanted:
            found.verdicts[i] = verdict(
                False, f"instruction {i + 1}: the strategy's {call.kind}, which a {intent.action} does not need"
            )
        elif len(of_kind) > 1:
            found.verdicts[i] = verdict(
                False,
                f"instruction {i + 1}: one of {len(of_kind)} strategy {wanted} "
                f"instructions; a {intent.action} needs exactly one",
            )
        else:
            problems = _mismatches(intent, layout, call, key, holdings, token_program)
            found.verdicts[i] = (
                verdict(False, f"instruction {i + 1}: the strategy's {wanted} " + "; ".join(problems))
                if problems
                else verdict(True, f"the strategy's {wanted} of {_target(named)}, as you asked")
            )
            found.call, found.strategy_key = call, key
    return found


def _strategy_key(call: Call, holdings: Holdings) -> bytes | None:
    """The strategy a call targets: a deposit carries it; the others act on a position that stores it."""
    if call.strategy_key is not None:
        return call.strategy_key
    before, after = holdings.positions.get(call.position or "", (None, None))
    view = before or after
    if view is None:
        state = holdings.before.get(call.position or "")
        view = holdings.layout.position(state.owner, state.data) if state and holdings.layout else None
    return view.strategy_key if view is not None else None


def _named(intent: Intent, layout: Layout, call: Call, key: bytes | None) -> dict[str, Any]:
    """What the review says the instruction targets: the strategy's id (when it is the one asked) and key."""
    strategy_id = (
        intent.strategy if key is not None and intent.strategy and key == layout.strategy_key(intent.strategy) else None
    )
    return {
        "id": strategy_id,
        "key": key.hex() if key is not None else None,
        "mint": call.mint,
        "position": call.position,
    }


def _target(named: dict[str, Any]) -> str:
    key = named["key"]
    who = f"strategy {named['id']}" if named["id"] else "an unnamed strategy"
    return f"{who} (key {key[:8]})" if key else who  # the key's first 8 hex digits; JSON has it whole


def _mismatches(
    intent: Intent, layout: Layout, call: Call, key: bytes | None, holdings: Holdings, token_program: str
) -> list[str]:
    """Where the call differs from what the request implies: each field against its derived value."""
    check = CallCheck(
        intent, call, holdings, intent.wallet, str(intent.mint), lambda o, m: associated_account(o, m, token_program)
    )
    wallet, mint, expect, problems = check.wallet, check.mint, check.expect, check.problems
    expect("the user", call.user, wallet)
    expect("the mint", call.mint, mint)
    if intent.strategy is not None:
        wanted_key = layout.strategy_key(intent.strategy)
        if key is not None and key != wanted_key:
            problems.append(f"targets strategy key {key.hex()[:8]}, not {intent.strategy}'s {wanted_key.hex()[:8]}")
        key = wanted_key
    if key is None:
        problems.append("targets a position that is not one of yours")
    else:
        expect("the position", call.position, layout.position_address(wallet, key, mint))
    if intent.position is not None:
        expect("the position", call.position, intent.position)
    opens = holdings.positions.get(call.position or "", (None, None))[0] is None
    if intent.strategy is None and kind_of(intent).opens_position and opens:
        # No strategy named (a transaction handed over): money goes only into a position the user holds.
        problems.append(f"opens a position in a strategy you did not name (key {(key or b'').hex()[:8]})")
    expect("the vault", call.vault, layout.vault_address(mint))
    expect("the authority", call.authority, layout.authority_address())
    if call.token_program is not None:
        expect("the token program", call.token_program, token_program)
    kind_of(intent).check_call(check)  # what the action's own kind checks of it (`kinds/`)
    return problems


def associated_account(owner: str, mint: str, token_program: str) -> str:
    """The associated token account of (owner, mint), derived with the program that owns the mint."""
    return str(
        programs.associated_token_address(
            Pubkey.from_string(owner), Pubkey.from_string(mint), Pubkey.from_string(token_program)
        )
    )
