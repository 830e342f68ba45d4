"""Check a transaction against what was asked: read the accounts it can write, simulate it, compare.

`compare.py` holds the rules and is pure; this module does the reading, over the RPC. Every lookup table
must have been read: an account that cannot be named refuses the check (`UnresolvedAccounts`).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from solders.message import to_bytes_versioned
from solders.pubkey import Pubkey

from yieldcli.addresses import b58decode
from yieldcli.chain.guard.compare import compare
from yieldcli.chain.guard.intent import Check, Intent
from yieldcli.chain.guard.message import Resolved, resolve
from yieldcli.chain.guard.pinned import pinned_program
from yieldcli.chain.guard.trusted import trusted_destinations
from yieldcli.chain.rpc.read_around import STABLE_READ_ATTEMPTS, AccountsKeptChanging, read_around
from yieldcli.chain.rpc.types import Simulation
from yieldcli.chain.tx.state import (
    LAMPORTS_PER_SIGNATURE,
    State,
    network_fee,
    precompile_signatures,
    state_of,
    writable_addresses,
)
from yieldcli.errors import YieldError
from yieldcli.solana import programs, token_metadata
from yieldcli.solana.token_layout import TOKEN_2022_PROGRAM, TOKEN_PROGRAMS, MintInfo, parse_mint
from yieldcli.tokens import built_in, learnable

TRANSFER_CHECKED = bytes([12])  # the SPL Token and Token-2022 instruction: amount (u64), then decimals (u8)

__all__ = ["STABLE_READ_ATTEMPTS", "AccountsKeptChanging", "check_transaction", "what_to_read"]


def what_to_read(message: Any, lookup_tables: Mapping[str, Sequence[str]] | None = None) -> tuple[Resolved, list[str]]:
    """What the check needs from the chain: the message's accounts resolved, and the accounts to read
    before and to have returned by the simulation (every account it may write). The simulation must
    also return its inner instructions: what the strategy program moved is read from them."""
    return resolve(message, lookup_tables), check_accounts(message, lookup_tables)


def check_accounts(message: Any, lookup_tables: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """The accounts the check reads around the simulation, in a stable order (so asked ahead they match)."""
    return sorted(writable_addresses(message, lookup_tables))


async def check_transaction(
    rpc: Any, tx: Any, intent: Intent, lookup_tables: Mapping[str, Sequence[str]] | None = None
) -> tuple[Check | None, Simulation]:
    """Read, simulate and compare: `(Check | None, Simulation)`; the check is None when the simulation failed."""
    message = tx.message
    resolved, addresses = what_to_read(message, lookup_tables)
    keys = [Pubkey.from_string(a) for a in addresses]
    # The cluster's identity decides which strategy program is trusted; when not known yet, the
    # question rides in the check's own batch rather than costing a round trip of its own.
    if hasattr(rpc, "ask_ahead") and rpc.known_genesis() is None:
        rpc.ask_ahead([("getGenesisHash", [])])
    # The RPC's word on the fee, checked against the count from the message: it rides in the same batch.
    fee_question = _fee_question(message)
    if hasattr(rpc, "ask_ahead"):
        rpc.ask_ahead([fee_question])
    # The pre-state and the simulation are separate answers: another transaction landing between them
    # would show its effect as this one's. `read_around` shows the pre-state held around the simulation.
    # The accounts it only reads ride along: the mints of its token accounts are usually among them,
    # and the comparison needs unknown mints' decimals.
    # The request's mint is always read: which token program owns it, and its extensions, are the chain's word.
    candidates = _readonly_candidates(message, addresses, lookup_tables)
    if intent.mint is not None and intent.mint not in addresses:
        candidates = list(dict.fromkeys([*candidates, intent.mint]))
    if intent.mint is not None and intent.named_as is not None:  # where an SPL Token mint's name is kept
        candidates = list(dict.fromkeys([*candidates, token_metadata.metaplex_address(intent.mint)]))
    readonly = [Pubkey.from_string(a) for a in candidates]
    around = await read_around(
        rpc,
        keys,
        tx,
        also_read=readonly,
        inner_instructions=True,
        also_read_for=lambda infos: _seen_in(addresses, infos),
    )
    simulation = around.simulation
    if not simulation.ok:
        return None, simulation
    # The cluster's identity decides which program and which destinations the user trusts on it.
    genesis = await rpc.genesis_hash()
    intent = replace(intent, strategy_program=pinned_program(genesis, intent.strategy_program))
    intent = replace(intent, trusted=trusted_destinations(intent, genesis))
    # One account per address on both sides (read_around refuses a short answer): strict, so an account
    # could never drop out of the comparison.
    before = {a: state_of(i) for a, i in zip(addresses, around.before, strict=True)}
    after = {a: state_of(i) for a, i in zip(addresses, simulation.accounts, strict=True)}
    known = {str(k): info for k, info in around.also.items()}
    decimals = await _mints(rpc, known, before, after)
    mints = _mint_accounts(known, before)
    # Every lamport the network charges, counted from the message as the runtime counts it: the
    # message's signatures, those its precompile instructions declare, and the priority fee.
    fee = network_fee(message)
    precompile = precompile_signatures(message) * LAMPORTS_PER_SIGNATURE
    priority = fee - message.header.num_required_signatures * LAMPORTS_PER_SIGNATURE - precompile
    check = compare(
        intent,
        before,
        after,
        fee=fee,
        decimals=decimals,
        resolved=resolved,
        inner=inner_by_instruction(simulation.inner_instructions),
        priority_fee=priority,
        precompile_fee=precompile,
        mints=mints,
    )
    found = [
        _converted_otherwise(intent, mints),
        _transferred_otherwise(intent, resolved, simulation.inner_instructions),
        _named_otherwise(intent, {**known, **{a: info for a, info in zip(addresses, around.before, strict=True)}}),
    ]
    if any(found):
        check = replace(check, differences=(*check.differences, *(f for f in found if f)))
    # The decimals of every mint as this check read them: what the review writes token units with.
    check = replace(check, observed={**check.observed, "decimals": {m: info.decimals for m, info in mints.items()}})
    said = await _fee_said(rpc, fee_question)
    if said is not None and said > fee:
        # The network would charge something the count from the message does not know of: not signed.
        differences = (
            *check.differences,
            f"the RPC says the network charges {said} lamports for this message, more than the {fee} counted from it",
        )
        check = replace(check, differences=differences)
    return check, simulation


def _converted_otherwise(intent: Intent, mints: Mapping[str, MintInfo]) -> str | None:
    """Why the amount asked is not the amount meant: its token units were converted with decimals the
    mint, as read with this check, does not have (an RPC that answered an earlier read otherwise)."""
    if intent.decimals is None or intent.mint is None:
        return None
    found = mints.get(intent.mint)
    if found is not None and found.decimals == intent.decimals:
        return None
    read = f"has {found.decimals}" if found is not None else "could not be read as a mint"
    return (
        f"the amount was converted with {intent.decimals} decimals, but the mint {intent.mint} {read} "
        "in this check's read of the chain: the RPC answered two ways"
    )


def _transferred_otherwise(intent: Intent, resolved: Resolved, inner: Sequence[Mapping[str, Any]] | None) -> str | None:
    """The token program's TransferChecked of the asked mint, in the simulation, states the mint's
    decimals (it fails on any others): the conversion's decimals must be those, whatever the accounts
    read said (an RPC lying about the mint's account but simulating honestly)."""
    if intent.decimals is None or intent.mint is None:
        return None
    keys = resolved.keys
    steps = [*resolved.instructions, *(i for ixs in inner_by_instruction(inner).values() for i in ixs)]
    for program, accounts, data in steps:
        token = program < len(keys) and keys[program] in TOKEN_PROGRAMS and len(accounts) > 1
        checked = token and data[:1] == TRANSFER_CHECKED and len(data) >= 10 and keys[accounts[1]] == intent.mint
        if checked and data[9] != intent.decimals:
            return (
                f"the amount was converted with {intent.decimals} decimals, but the transfer of {intent.mint} "
                f"in the simulation states {data[9]}: the RPC answered two ways"
            )
    return None


def _named_otherwise(intent: Intent, infos: Mapping[str, Any]) -> str | None:
    """The symbol the user named a listed token by must be the one its metadata gives in this check's
    read (Token-2022's extension in the mint, or the Metaplex account): the mint was resolved from an
    earlier read, which the RPC may have answered otherwise."""
    if intent.named_as is None or intent.mint is None:
        return None
    mint_info, metaplex = infos.get(intent.mint), infos.get(token_metadata.metaplex_address(intent.mint))
    names = None
    if mint_info is not None and str(mint_info.owner) == TOKEN_2022_PROGRAM:
        names = token_metadata.from_token_2022_mint(intent.mint, bytes(mint_info.data))
    if names is None and metaplex is not None and str(metaplex.owner) == token_metadata.METAPLEX_PROGRAM:
        names = token_metadata.from_metaplex(intent.mint, bytes(metaplex.data))
    shaped = learnable(*names) if names else None
    if shaped is not None and shaped[0].lower() == intent.named_as.lower():
        return None
    said = f"names it {shaped[0]!r}" if shaped else "gives it no name"
    return (
        f"you named the token {intent.named_as!r}, but the metadata of the mint {intent.mint} in this check's "
        f"read of the chain {said}: the RPC answered two ways"
    )


def _fee_question(message: Any) -> tuple[str, list[Any]]:
    encoded = base64.b64encode(to_bytes_versioned(message)).decode("ascii")
    return ("getFeeForMessage", [encoded, {"commitment": "confirmed"}])


async def _fee_said(rpc: Any, question: tuple[str, list[Any]]) -> int | None:
    """What the RPC says the message costs (getFeeForMessage), or None when it cannot say: an RPC
    without the method, a blockhash it no longer knows, an answer that is no whole number."""
    if not hasattr(rpc, "call"):
        return None
    try:
        answer = await rpc.call(*question)
    except (YieldError, ValueError, TypeError):
        return None
    value = answer.get("value") if isinstance(answer, Mapping) else None
    return value if type(value) is int and value >= 0 else None


def inner_by_instruction(
    raw: Sequence[Mapping[str, Any]] | None,
) -> dict[int, list[tuple[int, tuple[int, ...], bytes]]]:
    """The RPC's innerInstructions (base58 data) by top-level index."""
    return {
        int(entry["index"]): [
            (int(i["programIdIndex"]), tuple(int(a) for a in i["accounts"]), b58decode(i["data"]))
            for i in entry["instructions"]
        ]
        for entry in raw or ()
    }


def _seen_in(addresses: Sequence[str], infos: Sequence[Any]) -> list[Pubkey]:
    """The unknown mints of the token accounts in a pre-state read ahead: read with the check."""
    states = {a: state_of(i) for a, i in zip(addresses, infos, strict=True)}
    return [Pubkey.from_string(a) for a in _unknown_mints(states)]


def _readonly_candidates(
    message: Any, writable: Sequence[str], lookup_tables: Mapping[str, Sequence[str]] | None
) -> list[str]:
    """The accounts the message loads read-only, but for programs and sysvars (never a mint)."""
    static = [str(k) for k in message.account_keys]
    programs_called = {static[ix.program_id_index] for ix in message.instructions}
    loaded = [
        str((lookup_tables or {}).get(str(lookup.account_key), ())[i])
        for lookup in getattr(message, "address_table_lookups", None) or ()
        for i in lookup.readonly_indexes
        if i < len((lookup_tables or {}).get(str(lookup.account_key), ()))
    ]
    skip = set(writable) | programs_called
    return [a for a in dict.fromkeys([*static, *loaded]) if a not in skip and not a.startswith("Sysvar")]


async def _mints(rpc: Any, known: Mapping[str, Any], *sides: Mapping[str, State | None]) -> dict[str, int]:
    """The decimals of unknown mints: from `known` (read with the pre-state), the others read in one request."""
    mints = _unknown_mints(*sides)
    wanted = [a for a in mints if a not in known]
    infos = dict(known)
    if wanted:
        read = await rpc.multiple_accounts([Pubkey.from_string(a) for a in wanted])
        infos.update(zip(wanted, read, strict=True))
    return _decimals(mints, infos)


def _mint_accounts(known: Mapping[str, Any], before: Mapping[str, State | None]) -> dict[str, MintInfo]:
    """Every mint among the accounts read (the read-only ones, and the writable ones as they were before)."""
    found = {}
    for address, info in known.items():
        mint = parse_mint(str(info.owner), bytes(info.data)) if info is not None else None
        if mint is not None:
            found[address] = mint
    for address, state in before.items():
        mint = parse_mint(state.owner, state.data) if state is not None else None
        if mint is not None:
            found[address] = mint
    return found


def _unknown_mints(*sides: Mapping[str, State | None]) -> list[str]:
    return sorted(
        {s.token.mint for side in sides for s in side.values() if s and s.token and not built_in(s.token.mint)}
    )


def _decimals(mints: Sequence[str], infos: Mapping[str, Any]) -> dict[str, int]:
    """Decimals of the mints involved that are not known tokens, read from their mint accounts."""
    found = {}
    for mint in mints:
        info = infos.get(mint)
        places = programs.parse_mint_decimals(str(info.owner), bytes(info.data)) if info else None
        if places is not None:
            found[mint] = places
    return found
