"""Check a transaction against what was asked: read the accounts it can write, simulate it, compare.

`intent.py` holds the rules and is pure; this module does the reading, over the RPC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from solders.pubkey import Pubkey

from yieldcli.chain.intent import Check, Intent, compare
from yieldcli.chain.rpc_types import Simulation
from yieldcli.chain.instruction_rules import Resolved, resolve
from yieldcli.chain.pinned import pinned_program
from yieldcli.chain.state import LAMPORTS_PER_SIGNATURE, State, network_fee, state_of, writable_addresses
from yieldcli.errors import Refused
from yieldcli.solana import programs
from yieldcli.tokens import by_mint

STABLE_READ_ATTEMPTS = 5  # pre-state, simulation, pre-state again: tries before giving up on a busy account


class AccountsKeptChanging(Refused):
    """Other transactions kept changing the accounts while they were read and simulated."""


def what_to_read(message: Any, lookup_tables: Mapping[str, Sequence[str]] | None = None) -> tuple[Resolved, list[str]]:
    """What the check needs from the chain: the message's accounts resolved, and the accounts to read
    before and to have returned by the simulation (every account it may write). The simulation must
    also return its inner instructions: what the strategy program moved is read from them."""
    return resolve(message, lookup_tables), writable_addresses(message, lookup_tables)


async def check_transaction(rpc: Any, tx: Any, intent: Intent, lookup_tables: Mapping[str, Sequence[str]] | None = None
                            ) -> tuple[Check | None, Simulation]:
    """Read, simulate and compare: `(Check | None, Simulation)`; the check is None when the simulation failed."""
    message = tx.message
    resolved, addresses = what_to_read(message, lookup_tables)
    intent = replace(intent, strategy_program=pinned_program(await rpc.genesis_hash(), intent.strategy_program))
    keys = [Pubkey.from_string(a) for a in addresses]
    # The pre-state and the simulation are two requests: another transaction landing between them
    # would show its effect as this one's. Read the pre-state again after simulating; only when it
    # did not move is the difference this transaction's alone.
    for _ in range(STABLE_READ_ATTEMPTS):
        before_infos = await rpc.multiple_accounts(keys)
        simulation = await rpc.simulate(tx, accounts=keys)
        if not simulation.ok:
            return None, simulation
        if await rpc.multiple_accounts(keys) == before_infos:
            break
    else:
        raise AccountsKeptChanging(
            f"the accounts this transaction writes changed during each of {STABLE_READ_ATTEMPTS} checks; nothing was signed"
        )
    before = {a: state_of(i) for a, i in zip(addresses, before_infos)}
    after = {a: state_of(i) for a, i in zip(addresses, simulation.accounts)}
    decimals = await _decimals(rpc, before, after)
    fee = network_fee(message)
    priority = fee - message.header.num_required_signatures * LAMPORTS_PER_SIGNATURE
    return compare(intent, before, after, fee=fee, decimals=decimals, resolved=resolved,
                   inner=inner_by_instruction(simulation.inner_instructions), priority_fee=priority), simulation


def inner_by_instruction(raw: Sequence[Mapping[str, Any]]) -> dict[int, list[tuple[int, tuple[int, ...], bytes]]]:
    """The RPC's innerInstructions (base58 data) by top-level index."""
    from yieldcli.addresses import b58decode

    return {int(entry["index"]): [(int(i["programIdIndex"]), tuple(int(a) for a in i["accounts"]), b58decode(i["data"]))
                                  for i in entry["instructions"]] for entry in raw or ()}


async def _decimals(rpc: Any, *sides: Mapping[str, State | None]) -> dict[str, int]:
    """Decimals of the mints involved that are not known tokens, read from their mint accounts."""
    mints = sorted({s.token.mint for side in sides for s in side.values() if s and s.token and not by_mint(s.token.mint)})
    if not mints:
        return {}
    infos = await rpc.multiple_accounts([Pubkey.from_string(m) for m in mints])
    found = {}
    for mint, info in zip(mints, infos):
        places = programs.parse_mint_decimals(str(info.owner), bytes(info.data)) if info else None
        if places is not None:
            found[mint] = places
    return found
