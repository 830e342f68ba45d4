"""A structured, JSON-serialisable review of a transaction: who signs, what each instruction does."""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from yieldcli.amounts import scale
from yieldcli.solana import programs as p
from yieldcli.chain.decode import encode_transaction, message_version
from yieldcli.chain.sign import signature_slots
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
        return _plain(self)


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
                LookupTableReview(table, tuple(lookup.writable_indexes), tuple(lookup.readonly_indexes), entries is not None)
            )
            if entries is None:
                warnings.append(
                    f"accounts loaded from lookup table {table} are not resolved: the table's contents were not available"
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
                            warnings.append(f"lookup table {table} has {len(entries)} addresses; index {idx} is beyond it")
                    bucket.append(AccountReview(0, address, False, writable, None, table, idx))
        for acc in (*loaded_writable, *loaded_readonly):
            accounts.append(AccountReview(len(accounts), acc.address, False, acc.writable, None, acc.lookup_table, acc.lookup_index))

    signers = _signers(tx, static_writable)
    known_decimals = {t.mint: t.decimals for t in KNOWN_TOKENS}
    known_decimals.update(decimals or {})
    ctx = _Context(known_decimals, dict(account_mints or {}), warnings)

    instructions = []
    for n, ix in enumerate(message.instructions):
        program_id = static[ix.program_id_index]
        ix_accounts = [accounts[i] if i < len(accounts) else AccountReview(i, None, False, False) for i in ix.accounts]
        data = bytes(ix.data)
        name = p.PROGRAM_NAMES.get(program_id)
        kind, details, roles = None, {}, ()
        decoder = _DECODERS.get(program_id)
        if decoder is not None:
            try:
                kind, details, roles = decoder(data, [a.address for a in ix_accounts], ctx, program_id)
            except (struct.error, IndexError, ValueError):
                kind, details, roles = None, {}, ()
                warnings.append(f"instruction {n}: its data does not match any {name} instruction we know")
        elif name is None:
            warnings.append(f"instruction {n} calls an unknown program {program_id}; review it with care")
        named = tuple(
            AccountReview(a.index, a.address, a.signer, a.writable, roles[i] if i < len(roles) else None, a.lookup_table, a.lookup_index)
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


def _signers(tx: VersionedTransaction, writable) -> tuple[SignerReview, ...]:
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


@dataclass
class _Context:
    decimals: dict[str, int]
    account_mints: dict[str, str]
    warnings: list[str]

    def amount(self, details: dict[str, Any], raw: int, *, mint: str | None = None, decimals: int | None = None, account: str | None = None) -> None:
        """Set amount (exact int) and, when the decimals are known, ui_amount (exact decimal text)."""
        details["amount"] = raw
        if mint is None and account is not None:
            mint = self.account_mints.get(account)
        if mint is not None:
            details.setdefault("mint", mint)
        if decimals is None and mint is not None:
            decimals = self.decimals.get(mint)
        elif decimals is not None and mint is not None and mint in self.decimals and self.decimals[mint] != decimals:
            self.warnings.append(f"instruction claims {decimals} decimals for mint {mint}, which has {self.decimals[mint]}")
        if decimals is not None:
            details["decimals"] = decimals
            details["ui_amount"] = format(scale(raw, decimals), "f")


def _sol(lamports: int) -> str:
    return format(scale(lamports, 9), "f")


def _pubkey_at(data: bytes, offset: int) -> str:
    chunk = data[offset : offset + 32]
    if len(chunk) != 32:
        raise ValueError("short public key")
    return str(Pubkey.from_bytes(chunk))


def _coption_pubkey(data: bytes, offset: int) -> tuple[str | None, int]:
    # Token instruction data encodes COption<Pubkey> as a 1-byte tag then the key when present.
    flag = data[offset]
    if flag == 0:
        return None, offset + 1
    return _pubkey_at(data, offset + 1), offset + 33


_SYSTEM_KINDS = {
    0: "createAccount", 1: "assign", 2: "transfer", 3: "createAccountWithSeed", 4: "advanceNonceAccount",
    5: "withdrawNonceAccount", 6: "initializeNonceAccount", 7: "authorizeNonceAccount", 8: "allocate",
    9: "allocateWithSeed", 10: "assignWithSeed", 11: "transferWithSeed", 12: "upgradeNonceAccount",
}


def _decode_system(data: bytes, accts: list[str | None], ctx: _Context, program_id: str):
    (tag,) = struct.unpack_from("<I", data, 0)
    kind = _SYSTEM_KINDS.get(tag)
    if kind is None:
        raise ValueError(tag)
    details: dict[str, Any] = {}
    roles: tuple[str, ...] = ()
    if tag == 0:
        lamports, space = struct.unpack_from("<QQ", data, 4)
        details = {"lamports": lamports, "sol": _sol(lamports), "space": space, "owner": _pubkey_at(data, 20)}
        roles = ("funding", "newAccount")
    elif tag == 1:
        details = {"owner": _pubkey_at(data, 4)}
        roles = ("account",)
    elif tag == 2:
        (lamports,) = struct.unpack_from("<Q", data, 4)
        details = {"lamports": lamports, "sol": _sol(lamports)}
        roles = ("source", "destination")
    elif tag == 3:
        base = _pubkey_at(data, 4)
        (seed_len,) = struct.unpack_from("<Q", data, 36)
        seed = data[44 : 44 + seed_len].decode("utf-8")
        lamports, space = struct.unpack_from("<QQ", data, 44 + seed_len)
        owner = _pubkey_at(data, 60 + seed_len)
        details = {"base": base, "seed": seed, "lamports": lamports, "sol": _sol(lamports), "space": space, "owner": owner}
        roles = ("funding", "newAccount", "base")
    elif tag == 4:
        roles = ("nonceAccount", "recentBlockhashesSysvar", "nonceAuthority")
    elif tag == 8:
        (space,) = struct.unpack_from("<Q", data, 4)
        details = {"space": space}
        roles = ("account",)
    elif tag == 11:
        (lamports,) = struct.unpack_from("<Q", data, 4)
        details = {"lamports": lamports, "sol": _sol(lamports)}
        roles = ("source", "base", "destination")
    return kind, details, roles


# tag -> (kind, account roles)
_TOKEN_KINDS: dict[int, tuple[str, tuple[str, ...]]] = {
    0: ("initializeMint", ("mint", "rentSysvar")),
    1: ("initializeAccount", ("account", "mint", "owner", "rentSysvar")),
    2: ("initializeMultisig", ()),
    3: ("transfer", ("source", "destination", "authority")),
    4: ("approve", ("source", "delegate", "owner")),
    5: ("revoke", ("source", "owner")),
    6: ("setAuthority", ("account", "currentAuthority")),
    7: ("mintTo", ("mint", "account", "mintAuthority")),
    8: ("burn", ("account", "mint", "authority")),
    9: ("closeAccount", ("account", "destination", "owner")),
    10: ("freezeAccount", ("account", "mint", "freezeAuthority")),
    11: ("thawAccount", ("account", "mint", "freezeAuthority")),
    12: ("transferChecked", ("source", "mint", "destination", "authority")),
    13: ("approveChecked", ("source", "mint", "delegate", "owner")),
    14: ("mintToChecked", ("mint", "account", "mintAuthority")),
    15: ("burnChecked", ("account", "mint", "authority")),
    16: ("initializeAccount2", ("account", "mint", "rentSysvar")),
    17: ("syncNative", ("account",)),
    18: ("initializeAccount3", ("account", "mint")),
    19: ("initializeMultisig2", ()),
    20: ("initializeMint2", ("mint",)),
    21: ("getAccountDataSize", ("mint",)),
    22: ("initializeImmutableOwner", ("account",)),
    23: ("amountToUiAmount", ("mint",)),
    24: ("uiAmountToAmount", ("mint",)),
}
_AUTHORITY_TYPES = ("mintTokens", "freezeAccount", "accountOwner", "closeAccount")


def _decode_token(data: bytes, accts: list[str | None], ctx: _Context, program_id: str):
    tag = data[0]
    if tag not in _TOKEN_KINDS:
        # Token-2022 extensions and anything newer: named by tag only.
        if program_id == p.TOKEN_2022_PROGRAM:
            return f"instruction {tag}", {}, ()
        raise ValueError(tag)
    kind, roles = _TOKEN_KINDS[tag]
    role = {name: accts[i] if i < len(accts) else None for i, name in enumerate(roles)}
    details: dict[str, Any] = {name: role[name] for name in roles if not name.endswith("Sysvar")}
    if tag in (3, 4, 7, 8):
        (amount,) = struct.unpack_from("<Q", data, 1)
        mint = role.get("mint")
        account = role.get("source") or role.get("account")
        ctx.amount(details, amount, mint=mint, account=None if mint else account)
    elif tag in (12, 13, 14, 15):
        amount, decimals = struct.unpack_from("<QB", data, 1)
        ctx.amount(details, amount, mint=role.get("mint"), decimals=decimals)
    elif tag in (0, 20):
        decimals = data[1]
        mint_authority = _pubkey_at(data, 2)
        freeze, _ = _coption_pubkey(data, 34)
        details.update(decimals=decimals, mintAuthority=mint_authority, freezeAuthority=freeze)
    elif tag in (16, 18):
        details["owner"] = _pubkey_at(data, 1)
    elif tag == 6:
        authority_type = data[1]
        new, _ = _coption_pubkey(data, 2)
        details.update(
            authorityType=_AUTHORITY_TYPES[authority_type] if authority_type < len(_AUTHORITY_TYPES) else authority_type,
            newAuthority=new,
        )
    elif len(data) != 1 and tag in (1, 5, 9, 10, 11, 17):
        raise ValueError("unexpected data")
    return kind, details, roles


_ATA_ROLES = ("payer", "associatedAccount", "wallet", "mint", "systemProgram", "tokenProgram")


def _decode_ata(data: bytes, accts: list[str | None], ctx: _Context, program_id: str):
    tag = data[0] if data else 0
    if tag == 2:
        return "recoverNested", {}, ("nestedAccount", "nestedMint", "destination", "ownerAccount", "ownerMint", "wallet", "tokenProgram")
    if tag not in (0, 1) or len(data) > 1:
        raise ValueError(tag)
    role = dict(zip(_ATA_ROLES, accts))
    details = {k: role.get(k) for k in ("payer", "associatedAccount", "wallet", "mint", "tokenProgram")}
    if all(details.get(k) for k in ("associatedAccount", "wallet", "mint", "tokenProgram")):
        expected = p.associated_token_address(
            Pubkey.from_string(details["wallet"]), Pubkey.from_string(details["mint"]), Pubkey.from_string(details["tokenProgram"])
        )
        if str(expected) != details["associatedAccount"]:
            ctx.warnings.append(
                f"associated token account {details['associatedAccount']} is not the one derived for wallet {details['wallet']} and mint {details['mint']}"
            )
    return ("createIdempotent" if tag == 1 else "create"), details, _ATA_ROLES


def _decode_compute_budget(data: bytes, accts: list[str | None], ctx: _Context, program_id: str):
    tag = data[0]
    if tag == 1:
        (size,) = struct.unpack_from("<I", data, 1)
        return "requestHeapFrame", {"bytes": size}, ()
    if tag == 2:
        (units,) = struct.unpack_from("<I", data, 1)
        return "setComputeUnitLimit", {"units": units}, ()
    if tag == 3:
        (price,) = struct.unpack_from("<Q", data, 1)
        return "setComputeUnitPrice", {"micro_lamports": price}, ()
    if tag == 4:
        (limit,) = struct.unpack_from("<I", data, 1)
        return "setLoadedAccountsDataSizeLimit", {"bytes": limit}, ()
    raise ValueError(tag)


def _decode_memo(data: bytes, accts: list[str | None], ctx: _Context, program_id: str):
    return "memo", {"text": data.decode("utf-8")}, tuple("signer" for _ in accts)


def _decode_lookup_table(data: bytes, accts: list[str | None], ctx: _Context, program_id: str):
    (tag,) = struct.unpack_from("<I", data, 0)
    if tag == 0:
        recent_slot, bump = struct.unpack_from("<QB", data, 4)
        return "createLookupTable", {"recent_slot": recent_slot, "bump": bump}, ("lookupTable", "authority", "payer", "systemProgram")
    if tag == 1:
        return "freezeLookupTable", {}, ("lookupTable", "authority")
    if tag == 2:
        (count,) = struct.unpack_from("<Q", data, 4)
        keys = [_pubkey_at(data, 12 + 32 * i) for i in range(count)]
        return "extendLookupTable", {"addresses": keys}, ("lookupTable", "authority", "payer", "systemProgram")
    if tag == 3:
        return "deactivateLookupTable", {}, ("lookupTable", "authority")
    if tag == 4:
        return "closeLookupTable", {}, ("lookupTable", "authority", "recipient")
    raise ValueError(tag)


_DECODERS = {
    p.SYSTEM_PROGRAM: _decode_system,
    p.TOKEN_PROGRAM: _decode_token,
    p.TOKEN_2022_PROGRAM: _decode_token,
    p.ASSOCIATED_TOKEN_PROGRAM: _decode_ata,
    p.COMPUTE_BUDGET_PROGRAM: _decode_compute_budget,
    p.MEMO_PROGRAM: _decode_memo,
    p.MEMO_V1_PROGRAM: _decode_memo,
    p.ADDRESS_LOOKUP_TABLE_PROGRAM: _decode_lookup_table,
}


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
