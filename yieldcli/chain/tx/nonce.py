"""Durable nonces: transactions whose signatures stay valid until a nonce account is advanced.

A durable-nonce transaction uses the nonce account's stored value as its blockhash and starts with
AdvanceNonceAccount (the runtime requires it first, with the nonce account among the message's own
keys); landing advances the nonce, so the same signatures can never land twice.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.hash import Hash
from solders.instruction import Instruction
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.system_program import AdvanceNonceAccountParams, advance_nonce_account, create_nonce_account
from solders.transaction import VersionedTransaction

from yieldcli.chain.rpc.types import AccountInfo
from yieldcli.chain.tx.instructions import build_transaction, fetch_lookup_table, parse_ix_response
from yieldcli.errors import UsageError
from yieldcli.solana.programs import SYSTEM_PROGRAM

if TYPE_CHECKING:
    pass

# Versions::Current (u32), State::Initialized (u32), authority, durable nonce, lamports per signature.
NONCE_ACCOUNT_LENGTH = 80
_LAYOUT = struct.Struct("<II32s32sQ")
_CURRENT_VERSION = 1
_INITIALIZED = 1
_ADVANCE_NONCE_TAG = 4
_SYSTEM = Pubkey.from_string(SYSTEM_PROGRAM)


@dataclass(frozen=True)
class NonceAccount:
    address: Pubkey
    authority: Pubkey
    nonce: Hash  # the value a transaction uses as its blockhash
    lamports_per_signature: int
    lamports: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "address": str(self.address),
            "authority": str(self.authority),
            "nonce": str(self.nonce),
            "lamports_per_signature": self.lamports_per_signature,
            "lamports": self.lamports,
        }


class NonceRpc(Protocol):
    async def account_info(self, address: Pubkey, *, commitment: str | None = None) -> AccountInfo | None: ...


def parse_nonce_account(account: AccountInfo) -> NonceAccount:
    """An initialized nonce account, or a UsageError saying what the account is instead."""
    where = f"account {account.address}"
    if str(account.owner) != SYSTEM_PROGRAM:
        raise UsageError(f"{where} is not a nonce account: it belongs to {account.owner}, not the System Program")
    if len(account.data) != NONCE_ACCOUNT_LENGTH:
        raise UsageError(
            f"{where} is not a nonce account: it holds {len(account.data)} bytes of data, not {NONCE_ACCOUNT_LENGTH}"
        )
    version, state, authority, nonce, fee = _LAYOUT.unpack(account.data)
    if version != _CURRENT_VERSION:
        raise UsageError(
            f"{where} is a legacy nonce account (version {version})",
            hint="upgrade it with `solana upgrade-nonce-account`",
        )
    if state != _INITIALIZED:
        raise UsageError(f"{where} is not an initialized nonce account")
    return NonceAccount(account.address, Pubkey.from_bytes(authority), Hash(nonce), fee, account.lamports)


async def fetch_nonce(rpc: NonceRpc, address: Pubkey, *, commitment: str | None = None) -> NonceAccount:
    account = await rpc.account_info(address, commitment=commitment)
    if account is None:
        raise UsageError(f"nonce account {address} does not exist on this cluster", kind="usage.nonce.missing")
    return parse_nonce_account(account)


def create_nonce_instructions(
    payer: Pubkey, nonce_account: Pubkey, authority: Pubkey, lamports: int
) -> list[Instruction]:
    """Create an 80-byte System account funded with `lamports` (the rent-exempt minimum) and initialize
    it with `authority`, as `solana create-nonce-account` does."""
    return list(create_nonce_account(payer, nonce_account, authority, lamports))


def advance_instruction(nonce_account: Pubkey, authority: Pubkey) -> Instruction:
    return advance_nonce_account(AdvanceNonceAccountParams(nonce_pubkey=nonce_account, authorized_pubkey=authority))


def build_on_nonce(
    instructions: Sequence[Instruction],
    payer: Pubkey,
    nonce: NonceAccount,
    lookup_tables: Sequence[AddressLookupTableAccount] = (),
) -> VersionedTransaction:
    """An unsigned v0 transaction valid until the nonce moves: advance-nonce first, the nonce as blockhash."""
    return build_transaction(
        [advance_instruction(nonce.address, nonce.authority), *instructions], payer, nonce.nonce, lookup_tables
    )


@dataclass(frozen=True)
class NonceLifetime:
    """What keeps a durable-nonce transaction alive: `account` still holding `value`."""

    account: Pubkey
    authority: Pubkey
    value: Hash


def nonce_lifetime(message: MessageV0 | Message) -> NonceLifetime | None:
    """The nonce a message is built on (first instruction AdvanceNonceAccount), or None for a blockhash one."""
    if not message.instructions:
        return None
    keys = message.account_keys
    first = message.instructions[0]
    indexes = bytes(first.accounts)
    data = bytes(first.data)
    if first.program_id_index >= len(keys) or keys[first.program_id_index] != _SYSTEM:
        return None
    if len(data) != 4 or struct.unpack("<I", data)[0] != _ADVANCE_NONCE_TAG or len(indexes) < 3:
        return None
    # The runtime wants the nonce account and its authority among the static keys, not a lookup table.
    if indexes[0] >= len(keys) or indexes[2] >= len(keys):
        return None
    return NonceLifetime(keys[indexes[0]], keys[indexes[2]], message.recent_blockhash)


async def nonce_moved_on(rpc: NonceRpc, lifetime: NonceLifetime) -> bool:
    """True once the nonce account holds another value (or is gone): the transaction can no longer land."""
    return await nonce_used(rpc, lifetime.account, lifetime.value)


async def nonce_used(rpc: NonceRpc, account_address: Pubkey, value: Hash) -> bool:
    """True once `account_address` no longer holds the nonce `value` (or is gone)."""
    account = await rpc.account_info(account_address)
    if account is None:
        return True
    try:
        return parse_nonce_account(account).nonce != value
    except UsageError:
        return True  # closed or reassigned: nothing built on it can land


# --- building a service's instructions on a nonce (a deposit, withdrawal or close with nonce=) ----


@dataclass(frozen=True)
class OnNonce:
    """Build on this nonce account; `authority` (a public key), when given, must be the account's."""

    account: str
    authority: str | None = None


async def build_on_nonce_account(
    rpc: Any, body: Any, payer: Pubkey, on: OnNonce
) -> tuple[VersionedTransaction, tuple[AddressLookupTableAccount, ...]]:
    """`(transaction, lookup tables)`: the `/ix` instructions compiled on the nonce account's current
    value, advance-nonce first."""
    instructions, table_address = parse_ix_response(body)
    tables = (await fetch_lookup_table(rpc, table_address),) if table_address is not None else ()
    nonce = await fetch_nonce(rpc, Pubkey.from_string(on.account))
    if on.authority is not None and on.authority != str(nonce.authority):
        raise UsageError(
            f"nonce account {nonce.address} has authority {nonce.authority}, not {on.authority}",
            kind="usage.nonce.authority",
        )
    return build_on_nonce(instructions, payer, nonce, tables), tables
