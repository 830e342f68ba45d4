"""Check a transaction against what was asked: read the accounts it can write, simulate it, compare.

`intent.py` holds the rules and is pure; this module does the reading, over the RPC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from solders.pubkey import Pubkey

from yieldcli.chain.intent import Check, Intent, compare
from yieldcli.chain.rpc_types import Simulation
from yieldcli.chain.state import LAMPORTS_PER_SIGNATURE, State, multisig_of, network_fee, state_of, writable_addresses
from yieldcli.errors import Refused
from yieldcli.solana import programs
from yieldcli.tokens import by_mint

STABLE_READ_ATTEMPTS = 5  # pre-state, simulation, pre-state again: tries before giving up on a busy account


class AccountsKeptChanging(Refused):
    """Other transactions kept changing the accounts while they were read and simulated."""


async def check_transaction(rpc: Any, tx: Any, intent: Intent, lookup_tables: Mapping[str, Sequence[str]] | None = None
                            ) -> tuple[Check | None, Simulation]:
    """Read, simulate and compare: `(Check | None, Simulation)`; the check is None when the simulation failed."""
    message = tx.message
    addresses = writable_addresses(message, lookup_tables)
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
    multisigs = await _multisigs(rpc, intent, addresses, simulation.accounts, before, after)
    fee = network_fee(message)
    priority = fee - message.header.num_required_signatures * LAMPORTS_PER_SIGNATURE
    return compare(intent, before, after, fee=fee, decimals=decimals, multisigs=multisigs, priority_fee=priority), simulation


async def _multisigs(rpc: Any, intent: Intent, addresses: Sequence[str], simulated: Sequence[Any],
                     *sides: Mapping[str, State | None]) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Token multisigs owning the token accounts involved, as they stand after the transaction.

    A fund account may be owned by a multisig the wallet signs for alone: then it is the user's
    position, not a stranger's account. One this transaction writes is read from the simulation.
    """
    owners = {s.token.owner for side in sides for s in side.values() if s and s.token} - {intent.wallet, intent.payer}
    found = {a: m for a, info in zip(addresses, simulated) if a in owners and (m := multisig_of(info)) is not None}
    rest = sorted(owners - set(addresses))
    if rest:
        for address, info in zip(rest, await rpc.multiple_accounts([Pubkey.from_string(a) for a in rest])):
            if (m := multisig_of(info)) is not None:
                found[address] = m
    return found


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
