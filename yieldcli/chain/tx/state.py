"""What a transaction can touch and what it costs: its writable accounts, token account state, the fee."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from solders.message import Message, MessageV0
from solders.pubkey import Pubkey

from yieldcli.solana import programs
from yieldcli.solana.compute_units import default_unit_limit

LAMPORTS_PER_SIGNATURE = 5_000
_MAX_UNITS = 1_400_000
_MICRO_LAMPORTS = 1_000_000
_RENT_PER_BYTE_YEAR = 3_480
_RENT_EXEMPT_YEARS = 2
_ACCOUNT_OVERHEAD = 128
# Programs that verify signatures: each signature they verify costs a signature's fee.
PRECOMPILES = {
    "Ed25519SigVerify111111111111111111111111111": "Ed25519",
    "KeccakSecp256k11111111111111111111111111111": "Secp256k1",
    "Secp256r1SigVerify1111111111111111111111111": "Secp256r1",
}


@dataclass(frozen=True)
class TokenState:
    """The fields of an SPL Token / Token-2022 account the intent check compares."""

    mint: str
    owner: str
    amount: int
    delegate: str | None
    delegated_amount: int
    close_authority: str | None
    native: bool
    reserve: int = 0  # a wrapped-SOL account's rent-exempt reserve: its lamports beyond it are wrapped when synced


@dataclass(frozen=True)
class State:
    """One account as the RPC returned it: None fields mean it does not exist."""

    lamports: int
    size: int
    token: TokenState | None
    owner: str = ""  # the owning program
    data: bytes = b""  # raw, for the accounts whose authority the guard reads (nonce, stake, mint, position)


def parse_token(owner_program: str, data: bytes) -> TokenState | None:
    """A token account's state, or None for anything else (mints, other programs' accounts)."""
    if programs.parse_token_account(owner_program, data) is None:
        return None

    def key(offset: int) -> str | None:
        (tag,) = struct.unpack_from("<I", data, offset)
        return str(Pubkey.from_bytes(data[offset + 4 : offset + 36])) if tag else None

    (amount,) = struct.unpack_from("<Q", data, 64)
    (native_tag, reserve) = struct.unpack_from("<IQ", data, 109)
    (delegated,) = struct.unpack_from("<Q", data, 121)
    return TokenState(
        mint=str(Pubkey.from_bytes(data[0:32])),
        owner=str(Pubkey.from_bytes(data[32:64])),
        amount=amount,
        delegate=key(72),
        delegated_amount=delegated,
        close_authority=key(129),
        native=bool(native_tag),
        reserve=reserve if native_tag else 0,
    )


def state_of(info: Any) -> State | None:
    """`chain.rpc.AccountInfo` (or None) to the intent check's view.

    An account left with no lamports does not outlive the transaction, whatever data a simulator
    still shows in it (a closed token account may keep its bytes until the runtime drops it).
    """
    if info is None or info.lamports == 0:
        return None
    data = bytes(info.data)
    return State(info.lamports, len(data), parse_token(str(info.owner), data), str(info.owner), data)


def network_fee(message: Message | MessageV0) -> int:
    """Signatures × 5000 plus the priority fee the compute-budget instructions set."""
    keys = [str(k) for k in message.account_keys]
    limit: int | None = None
    price = 0
    for ix in message.instructions:
        data = bytes(ix.data)
        if keys[ix.program_id_index] != programs.COMPUTE_BUDGET_PROGRAM:
            continue
        if data[:1] == b"\x02" and len(data) >= 5:
            limit = int.from_bytes(data[1:5], "little")  # SetComputeUnitLimit: u32
        elif data[:1] == b"\x03" and len(data) >= 9:
            price = int.from_bytes(data[1:9], "little")  # SetComputeUnitPrice: u64 micro-lamports per unit
    if limit is None:  # as agave counts it: 3,000 per builtin's instruction, 200,000 per other one
        limit = default_unit_limit(keys[ix.program_id_index] for ix in message.instructions)
    units = min(limit, _MAX_UNITS)
    return signature_fee(message) + -(-price * units // _MICRO_LAMPORTS)


def signature_fee(message: Message | MessageV0) -> int:
    """The part of the network fee the signatures cost (the message's and those precompiles verify)."""
    return (message.header.num_required_signatures + precompile_signatures(message)) * LAMPORTS_PER_SIGNATURE


def precompile_signatures(message: Message | MessageV0) -> int:
    """The signatures the message's precompile instructions declare (each data's first byte): the
    runtime charges each as one of the message's, whether or not it verifies the same one again."""
    keys = [str(k) for k in message.account_keys]
    return declared_signatures((keys[ix.program_id_index], bytes(ix.data)) for ix in message.instructions)


def declared_signatures(instructions: Iterable[tuple[str, bytes]]) -> int:
    """The signatures precompile instructions, given as (program, data), declare: as agave counts them."""
    return sum(data[0] for program, data in instructions if program in PRECOMPILES and data)


def writable_addresses(message: Any, lookup_tables: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Every account the message may write, lookup-table accounts resolved; raise if one cannot be."""
    keys = [str(k) for k in message.account_keys]
    header = message.header
    signed_writable = header.num_required_signatures - header.num_readonly_signed_accounts
    unsigned_end = len(keys) - header.num_readonly_unsigned_accounts
    out = [k for i, k in enumerate(keys) if i < signed_writable or header.num_required_signatures <= i < unsigned_end]
    for lookup in getattr(message, "address_table_lookups", None) or ():
        entries = (lookup_tables or {}).get(str(lookup.account_key))
        for index in lookup.writable_indexes:
            if entries is None or index >= len(entries):
                raise ValueError(
                    f"lookup table {lookup.account_key} could not be read, so account #{index} in it is unknown"
                )
            out.append(str(entries[index]))
    return list(dict.fromkeys(out))


def rent_exempt_minimum(size: int) -> int:
    return (_ACCOUNT_OVERHEAD + size) * _RENT_PER_BYTE_YEAR * _RENT_EXEMPT_YEARS
