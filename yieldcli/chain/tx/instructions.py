"""Build an unsigned v0 transaction from the service's `/ix` answer (keys as 32-integer arrays)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from solders.address_lookup_table_account import AddressLookupTable, AddressLookupTableAccount
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from yieldcli.addresses import is_pubkey
from yieldcli.chain.rpc.types import AccountInfo, LatestBlockhash
from yieldcli.errors import ServiceError, UsageError
from yieldcli.solana.programs import ADDRESS_LOOKUP_TABLE_PROGRAM

INSTRUCTION_KEYS = ("deposit_instructions", "withdraw_instructions", "close_user_fund_instructions")


class IxRpc(Protocol):
    async def account_info(self, address: Pubkey, *, commitment: str | None = None) -> AccountInfo | None: ...
    async def latest_blockhash(self, commitment: str | None = None) -> LatestBlockhash: ...


@dataclass(frozen=True)
class BuiltTransaction:
    transaction: VersionedTransaction  # unsigned: every signature slot is empty
    last_valid_block_height: int
    lookup_tables: tuple[AddressLookupTableAccount, ...]


def _bad(where: str, problem: str) -> ServiceError:
    return ServiceError(f"the service returned an invalid instruction: {where} {problem}")


def _bytes_field(value: Any, where: str, *, exact: int | None = None) -> bytes:
    if not isinstance(value, list):
        raise _bad(where, f"must be an array of integers, got {type(value).__name__}")
    if exact is not None and len(value) != exact:
        raise _bad(where, f"must have exactly {exact} integers, got {len(value)}")
    for i, b in enumerate(value):
        if type(b) is not int or not 0 <= b <= 255:
            raise _bad(f"{where}[{i}]", f"must be an integer 0..255, got {b!r}")
    return bytes(value)


def parse_instruction(obj: Any, where: str = "instruction") -> Instruction:
    """One `{program_id, accounts, data}` object, validated strictly; extra fields are ignored."""
    if not isinstance(obj, Mapping):
        raise _bad(where, f"must be an object, got {type(obj).__name__}")
    for key in ("program_id", "accounts", "data"):
        if key not in obj:
            raise _bad(where, f"has no {key}")
    program_id = Pubkey.from_bytes(_bytes_field(obj["program_id"], f"{where}.program_id", exact=32))
    accounts_in = obj["accounts"]
    if not isinstance(accounts_in, list):
        raise _bad(f"{where}.accounts", f"must be an array, got {type(accounts_in).__name__}")
    metas = []
    for j, acc in enumerate(accounts_in):
        at = f"{where}.accounts[{j}]"
        if not isinstance(acc, Mapping):
            raise _bad(at, f"must be an object, got {type(acc).__name__}")
        for key in ("pubkey", "is_signer", "is_writable"):
            if key not in acc:
                raise _bad(at, f"has no {key}")
        for key in ("is_signer", "is_writable"):
            if not isinstance(acc[key], bool):
                raise _bad(f"{at}.{key}", f"must be true or false, got {acc[key]!r}")
        pubkey = Pubkey.from_bytes(_bytes_field(acc["pubkey"], f"{at}.pubkey", exact=32))
        metas.append(AccountMeta(pubkey, acc["is_signer"], acc["is_writable"]))
    data = _bytes_field(obj["data"], f"{where}.data")
    return Instruction(program_id, data, metas)


def parse_instructions(items: Any, where: str = "instructions") -> list[Instruction]:
    if not isinstance(items, list):
        raise _bad(where, f"must be an array, got {type(items).__name__}")
    if not items:
        raise ServiceError(f"the service returned no instructions in {where}")
    return [parse_instruction(obj, f"{where}[{i}]") for i, obj in enumerate(items)]


def parse_ix_response(body: Any, key: str | None = None) -> tuple[list[Instruction], Pubkey | None]:
    """The instructions and lookup table address of a `/deposit/ix`, `/withdraw/ix` or `/close-user-account/ix` body."""
    if not isinstance(body, Mapping):
        raise ServiceError(f"the service returned {type(body).__name__} where an object with instructions was expected")
    if key is None:
        key = next((k for k in INSTRUCTION_KEYS if k in body), None)
        if key is None:
            raise ServiceError(f"the service's answer has none of {', '.join(INSTRUCTION_KEYS)}")
    elif key not in body:
        raise ServiceError(f"the service's answer has no {key}")
    instructions = parse_instructions(body[key], key)
    table = body.get("lookup_table")
    if table in (None, ""):
        return instructions, None
    if not isinstance(table, str) or not is_pubkey(table):
        raise ServiceError(f"the service returned an invalid lookup_table {table!r}: not a Solana address")
    return instructions, Pubkey.from_string(table)


async def fetch_lookup_table(rpc: IxRpc, address: Pubkey) -> AddressLookupTableAccount:
    """Read a lookup table account through the RPC (solana-py has no getAddressLookupTable)."""
    account = await rpc.account_info(address)
    if account is None:
        raise ServiceError(
            f"lookup table {address} does not exist on this cluster",
            kind="service.lookup_table.missing",
        )
    if str(account.owner) != ADDRESS_LOOKUP_TABLE_PROGRAM:
        raise ServiceError(f"account {address} is not an address lookup table (its owner is {account.owner})")
    try:
        table = AddressLookupTable.deserialize(account.data)
    except BaseException as exc:  # pyo3 panics are BaseExceptions
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise ServiceError(f"lookup table {address} could not be read: its data is malformed") from None
    return AddressLookupTableAccount(address, list(table.addresses))


def build_transaction(
    instructions: Sequence[Instruction],
    payer: Pubkey,
    blockhash: Hash,
    lookup_tables: Sequence[AddressLookupTableAccount] = (),
) -> VersionedTransaction:
    """An unsigned v0 transaction; accounts found in `lookup_tables` are loaded from them."""
    try:
        message = MessageV0.try_compile(payer, list(instructions), list(lookup_tables), blockhash)
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise UsageError(f"cannot build the transaction: {exc}") from None
    empty = [Signature.default()] * message.header.num_required_signatures
    return VersionedTransaction.populate(message, empty)


async def build_from_ix(rpc: IxRpc, body: Any, payer: Pubkey, *, key: str | None = None) -> BuiltTransaction:
    """Parse an `/ix` answer, read its lookup table, take a fresh blockhash, and compile."""
    instructions, table_address = parse_ix_response(body, key)
    tables = (await fetch_lookup_table(rpc, table_address),) if table_address is not None else ()
    latest = await rpc.latest_blockhash()
    tx = build_transaction(instructions, payer, latest.blockhash, tables)
    return BuiltTransaction(tx, latest.last_valid_block_height, tables)


def decompile_message(
    message: MessageV0 | Message, lookup_tables: Sequence[AddressLookupTableAccount] = ()
) -> list[Instruction]:
    """The instructions of a compiled message, with the accounts its lookup tables load resolved.

    solders has no decompiler for v0 messages with lookup tables. Signer and writable flags come
    from the message header and the lookups (loaded writable accounts first, then loaded read-only
    ones, table by table, as the runtime orders them), so compiling the result again for the same
    payer and tables gives every instruction the same account metas.
    """
    static = list(message.account_keys)
    header = message.header
    n_signed = header.num_required_signatures
    n_signed_writable = n_signed - header.num_readonly_signed_accounts
    n_unsigned_writable_end = len(static) - header.num_readonly_unsigned_accounts
    metas = [
        (key, i < n_signed, i < n_signed_writable if i < n_signed else i < n_unsigned_writable_end)
        for i, key in enumerate(static)
    ]
    lookups = list(getattr(message, "address_table_lookups", None) or ())
    by_key = {table.key: list(table.addresses) for table in lookup_tables}
    loaded_writable: list[tuple[Pubkey, bool, bool]] = []
    loaded_readonly: list[tuple[Pubkey, bool, bool]] = []
    for lookup in lookups:
        addresses = by_key.get(lookup.account_key)
        if addresses is None:
            raise ServiceError(
                f"the transaction loads accounts from lookup table {lookup.account_key}, which could not be read"
            )
        for indexes, into, writable in (
            (lookup.writable_indexes, loaded_writable, True),
            (lookup.readonly_indexes, loaded_readonly, False),
        ):
            for index in bytes(indexes):
                if index >= len(addresses):
                    raise ServiceError(
                        f"the transaction uses entry {index} of lookup table {lookup.account_key}, "
                        f"which has {len(addresses)}"
                    )
                into.append((addresses[index], False, writable))
    metas += loaded_writable + loaded_readonly
    instructions = []
    for n, compiled in enumerate(message.instructions):
        indexes = [compiled.program_id_index, *bytes(compiled.accounts)]
        if any(i >= len(metas) for i in indexes):
            raise ServiceError(f"instruction {n} of the transaction refers to an account the message does not have")
        accounts = [AccountMeta(metas[i][0], metas[i][1], metas[i][2]) for i in bytes(compiled.accounts)]
        instructions.append(Instruction(metas[compiled.program_id_index][0], bytes(compiled.data), accounts))
    return instructions


def recompile_message(
    message: MessageV0 | Message,
    instructions: Sequence[Instruction],
    lookup_tables: Sequence[AddressLookupTableAccount] = (),
) -> MessageV0 | Message:
    """`instructions` compiled for the same payer, blockhash and (for v0) lookup tables as `message`."""
    payer = message.account_keys[0]
    try:
        if isinstance(message, Message):
            return Message.new_with_blockhash(list(instructions), payer, message.recent_blockhash)
        used = {lookup.account_key for lookup in message.address_table_lookups}
        tables = [table for table in lookup_tables if table.key in used]
        return MessageV0.try_compile(payer, list(instructions), tables, message.recent_blockhash)
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise UsageError(f"cannot compile the transaction again: {exc}") from None
