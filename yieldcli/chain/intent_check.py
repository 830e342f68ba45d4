"""Check a transaction against what was asked: read the accounts it can write, simulate it, compare.

`intent.py` holds the rules and is pure; this module does the reading, over the RPC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from solders.pubkey import Pubkey

from yieldcli.chain.intent import Check, Intent, compare
from yieldcli.chain.read_around import STABLE_READ_ATTEMPTS, AccountsKeptChanging, read_around
from yieldcli.chain.rpc_types import Simulation
from yieldcli.chain.state import LAMPORTS_PER_SIGNATURE, State, multisig_of, network_fee, state_of, writable_addresses
from yieldcli.solana import programs
from yieldcli.tokens import by_mint

__all__ = ["STABLE_READ_ATTEMPTS", "AccountsKeptChanging", "check_transaction"]

async def check_transaction(rpc: Any, tx: Any, intent: Intent, lookup_tables: Mapping[str, Sequence[str]] | None = None
                            ) -> tuple[Check | None, Simulation]:
    """Read, simulate and compare: `(Check | None, Simulation)`; the check is None when the simulation failed."""
    message = tx.message
    addresses = check_accounts(message, lookup_tables)
    keys = [Pubkey.from_string(a) for a in addresses]
    # The pre-state and the simulation are separate answers: another transaction landing between them
    # would show its effect as this one's. `read_around` shows the pre-state held around the simulation.
    # The accounts it only reads ride along: the owners and mints of its token accounts are usually
    # among them, and the comparison needs those (multisig owners, unknown mints' decimals).
    readonly = [Pubkey.from_string(a) for a in _readonly_candidates(message, addresses, lookup_tables)]
    around = await read_around(rpc, keys, tx, also_read=readonly,
                               also_read_for=lambda infos: _seen_in(intent, addresses, infos))
    simulation = around.simulation
    if not simulation.ok:
        return None, simulation
    before = {a: state_of(i) for a, i in zip(addresses, around.before)}
    after = {a: state_of(i) for a, i in zip(addresses, simulation.accounts)}
    known = {str(k): info for k, info in around.also.items()}
    decimals, multisigs = await _mints_and_owners(rpc, intent, addresses, simulation.accounts, known, before, after)
    fee = network_fee(message)
    priority = fee - message.header.num_required_signatures * LAMPORTS_PER_SIGNATURE
    return compare(intent, before, after, fee=fee, decimals=decimals, multisigs=multisigs, priority_fee=priority), simulation


def check_accounts(message: Any, lookup_tables: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """The accounts the check reads around the simulation, in a stable order (so asked ahead they match)."""
    return sorted(writable_addresses(message, lookup_tables))


def _seen_in(intent: Intent, addresses: Sequence[str], infos: Sequence[Any]) -> list[Pubkey]:
    """The owners and unknown mints of the token accounts in a pre-state read ahead: read with the check."""
    states = {a: state_of(i) for a, i in zip(addresses, infos)}
    wanted = [*_unknown_mints(states), *sorted(_owners(intent, states) - set(addresses))]
    return [Pubkey.from_string(a) for a in wanted]


def _readonly_candidates(message: Any, writable: Sequence[str], lookup_tables: Mapping[str, Sequence[str]] | None) -> list[str]:
    """The accounts the message loads read-only, but for programs and sysvars (never a mint or an owner)."""
    static = [str(k) for k in message.account_keys]
    programs_called = {static[ix.program_id_index] for ix in message.instructions}
    loaded = [str((lookup_tables or {}).get(str(lookup.account_key), ())[i])
              for lookup in getattr(message, "address_table_lookups", None) or ()
              for i in lookup.readonly_indexes if i < len((lookup_tables or {}).get(str(lookup.account_key), ()))]
    skip = set(writable) | programs_called
    return [a for a in dict.fromkeys([*static, *loaded]) if a not in skip and not a.startswith("Sysvar")]


async def _mints_and_owners(rpc: Any, intent: Intent, addresses: Sequence[str], simulated: Sequence[Any],
                            known: Mapping[str, Any], *sides: Mapping[str, State | None]
                            ) -> tuple[dict[str, int], dict[str, tuple[int, tuple[str, ...]]]]:
    """The decimals of unknown mints and the multisigs owning token accounts involved: from `known`
    (read with the pre-state), the others read in one request."""
    mints = _unknown_mints(*sides)
    owners = _owners(intent, *sides)
    rest = sorted(owners - set(addresses))
    wanted = [a for a in [*mints, *rest] if a not in known]
    infos = dict(known)
    if wanted:
        infos.update(zip(wanted, await rpc.multiple_accounts([Pubkey.from_string(a) for a in wanted])))
    return _decimals(mints, infos), _multisigs(owners, addresses, simulated, rest, infos)


def _owners(intent: Intent, *sides: Mapping[str, State | None]) -> set[str]:
    return {s.token.owner for side in sides for s in side.values() if s and s.token} - {intent.wallet, intent.payer}


def _multisigs(owners: set[str], addresses: Sequence[str], simulated: Sequence[Any], rest: Sequence[str],
               infos: Mapping[str, Any]) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Token multisigs owning the token accounts involved, as they stand after the transaction.

    A fund account may be owned by a multisig the wallet signs for alone: then it is the user's
    position, not a stranger's account. One this transaction writes is read from the simulation.
    """
    found = {a: m for a, info in zip(addresses, simulated) if a in owners and (m := multisig_of(info)) is not None}
    for address in rest:
        if (m := multisig_of(infos.get(address))) is not None:
            found[address] = m
    return found


def _unknown_mints(*sides: Mapping[str, State | None]) -> list[str]:
    return sorted({s.token.mint for side in sides for s in side.values() if s and s.token and not by_mint(s.token.mint)})


def _decimals(mints: Sequence[str], infos: Mapping[str, Any]) -> dict[str, int]:
    """Decimals of the mints involved that are not known tokens, read from their mint accounts."""
    found = {}
    for mint in mints:
        info = infos.get(mint)
        places = programs.parse_mint_decimals(str(info.owner), bytes(info.data)) if info else None
        if places is not None:
            found[mint] = places
    return found
