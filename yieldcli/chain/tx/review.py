"""A structured, JSON-serialisable review of a transaction: who signs, what each instruction does."""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from yieldcli.chain.tx.decode import encode_transaction, message_version
from yieldcli.chain.tx.decoders import DECODERS
from yieldcli.chain.tx.decoders.common import DecodeContext
from yieldcli.chain.tx.signatures import signature_slots
from yieldcli.solana import programs
from yieldcli.tokens import KNOWN_TOKENS

LookupTables = Mapping["str | Pubkey", Sequence["str | Pubkey"]] | Iterable[AddressLookupTableAccount]


@dataclass(frozen=True)
class SignerReview:
    index: int
    address: str
    signed: bool  # a present signature that verifies against the message
    invalid: bool  # a present signature that does not verify
    writable: bool
    fee_payer: bool


@dataclass(frozen=True)
class AccountReview:
    index: int  # position in the message's account list (static keys, then loaded writable, then loaded readonly)
    address: str | None  # None when it comes from a lookup table whose contents were not given
    signer: bool
    writable: bool
    role: str | None = None  # what the instruction calls it ("source", "destination", ...)
    lookup_table: str | None = None
    lookup_index: int | None = None


@dataclass(frozen=True)
class InstructionReview:
    index: int
    program_id: str
    program: str
    unknown: bool
    kind: str | None
    accounts: tuple[AccountReview, ...]
    data: str  # base64 of the instruction data
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LookupTableReview:
    address: str
    writable_indexes: tuple[int, ...]
    readonly_indexes: tuple[int, ...]
    resolved: bool


@dataclass(frozen=True)
class Review:
    version: str | int
    fee_payer: str
    recent_blockhash: str
    signers: tuple[SignerReview, ...]
    instructions: tuple[InstructionReview, ...]
    lookup_tables: tuple[LookupTableReview, ...]
    warnings: tuple[str, ...]
    transaction: str  # the reviewed transaction, base64

    @property
    def unsigned_signers(self) -> tuple[str, ...]:
        return tuple(s.address for s in self.signers if not s.signed)

    @property
    def has_unknown_programs(self) -> bool:
        return any(ix.unknown for ix in self.instructions)

    def to_dict(self) -> dict[str, Any]:
        plain: dict[str, Any] = _plain(self)
        return plain


def review_transaction(
    tx: VersionedTransaction,
    *,
    lookup_tables: LookupTables | None = None,
    decimals: Mapping[str, int] | None = None,
    account_mints: Mapping[str, str] | None = None,
) -> Review:
    """Review `tx`.

    `lookup_tables` gives table contents (address -> addresses, or `AddressLookupTableAccount`s) so
    accounts loaded from them are shown by address. `decimals` (mint -> decimals) adds to the known
    tokens; `account_mints` (token account -> mint) lets plain Transfer amounts be scaled too.
    """
    message = tx.message
    header = message.header
    static = [str(k) for k in message.account_keys]
    n_signers = header.num_required_signatures
    warnings: list[str] = []

    def static_writable(i: int) -> bool:
        if i < n_signers:
            return i < n_signers - header.num_readonly_signed_accounts
        return i < len(static) - header.num_readonly_unsigned_accounts

    accounts: list[AccountReview] = [
        AccountReview(i, key, i < n_signers, static_writable(i)) for i, key in enumerate(static)
    ]
    table_reviews: list[LookupTableReview] = []
    if isinstance(message, MessageV0) and message.address_table_lookups:
        contents = _normalise_tables(lookup_tables)
        loaded_writable: list[AccountReview] = []
        loaded_readonly: list[AccountReview] = []
        for lookup in message.address_table_lookups:
            table = str(lookup.account_key)
            entries = contents.get(table)
            table_reviews.append(
                LookupTableReview(
                    table, tuple(lookup.writable_indexes), tuple(lookup.readonly_indexes), entries is not None
                )
            )
            if entries is None:
                warnings.append(
                    f"accounts loaded from lookup table {table} are not resolved: "
                    "the table's contents were not available"
                )
            for bucket, indexes, writable in (
                (loaded_writable, lookup.writable_indexes, True),
                (loaded_readonly, lookup.readonly_indexes, False),
            ):
                for idx in indexes:
                    address = None
                    if entries is not None:
                        if idx < len(entries):
                            address = entries[idx]
                        else:
                            warnings.append(
                                f"lookup table {table} has {len(entries)} addresses; index {idx} is beyond it"
                            )
                    bucket.append(AccountReview(0, address, False, writable, None, table, idx))
        for acc in (*loaded_writable, *loaded_readonly):
            accounts.append(
                AccountReview(len(accounts), acc.address, False, acc.writable, None, acc.lookup_table, acc.lookup_index)
            )

    signers = _signers(tx, static_writable)
    known_decimals = {t.mint: t.decimals for t in KNOWN_TOKENS}
    known_decimals.update(decimals or {})
    ctx = DecodeContext(known_decimals, dict(account_mints or {}), warnings)

    instructions = []
    for n, ix in enumerate(message.instructions):
        program_id = static[ix.program_id_index]
        ix_accounts = [accounts[i] if i < len(accounts) else AccountReview(i, None, False, False) for i in ix.accounts]
        data = bytes(ix.data)
        name = programs.PROGRAM_NAMES.get(program_id)
        kind: str | None = None
        details: dict[str, Any] = {}
        roles: tuple[str, ...] = ()
        decoder = DECODERS.get(program_id)
        if decoder is not None:
            try:
                kind, details, roles = decoder(data, [a.address for a in ix_accounts], ctx, program_id)
            except (struct.error, IndexError, ValueError):
                kind, details, roles = None, {}, ()
                warnings.append(f"instruction {n}: its data does not match any {name} instruction we know")
        elif name is None:
            warnings.append(f"instruction {n} calls an unknown program {program_id}; review it with care")
        named = tuple(
            AccountReview(
                a.index,
                a.address,
                a.signer,
                a.writable,
                roles[i] if i < len(roles) else None,
                a.lookup_table,
                a.lookup_index,
            )
            for i, a in enumerate(ix_accounts)
        )
        instructions.append(
            InstructionReview(
                index=n,
                program_id=program_id,
                program=name or "Unknown program",
                unknown=name is None,
                kind=kind,
                accounts=named,
                data=base64.b64encode(data).decode("ascii"),
                details=details,
            )
        )

    return Review(
        version=message_version(tx),
        fee_payer=static[0] if static else "",
        recent_blockhash=str(message.recent_blockhash),
        signers=signers,
        instructions=tuple(instructions),
        lookup_tables=tuple(table_reviews),
        warnings=tuple(warnings),
        transaction=encode_transaction(tx),
    )


def _signers(tx: VersionedTransaction, writable: Callable[[int], bool]) -> tuple[SignerReview, ...]:
    return tuple(
        SignerReview(s.index, str(s.signer), s.valid, s.present and not s.valid, writable(s.index), s.index == 0)
        for s in signature_slots(tx)
    )


def _normalise_tables(tables: LookupTables | None) -> dict[str, list[str]]:
    if tables is None:
        return {}
    if isinstance(tables, Mapping):
        return {str(k): [str(a) for a in v] for k, v in tables.items()}
    return {str(t.key): [str(a) for a in t.addresses] for t in tables}


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
