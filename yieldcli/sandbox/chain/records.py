"""What the sandbox chain remembers of a transaction, and the small conversions around it."""

from __future__ import annotations

import base64
import json
import struct
from dataclasses import dataclass, field
from typing import Any

from solders.account import Account
from solders.message import Message, MessageV0
from solders.transaction import VersionedTransaction
from solders.transaction_metadata import FailedTransactionMetadata

from yieldcli.solana import programs
from yieldcli.solana.compute_units import BUILTIN_PROGRAMS, VOTE_PROGRAM, default_unit_limit

# Errors for which a transaction never lands (no fee, no status), as a leader would drop it.
NOT_LANDED = {
    "AccountInUse",
    "AccountLoadedTwice",
    "AccountNotFound",
    "ProgramAccountNotFound",
    "InsufficientFundsForFee",
    "InvalidAccountForFee",
    "AlreadyProcessed",
    "BlockhashNotFound",
    "SignatureFailure",
    "InvalidAccountIndex",
    "SanitizeFailure",
    "TooManyAccountLocks",
    "AddressLookupTableNotFound",
    "InvalidAddressLookupTableOwner",
    "InvalidAddressLookupTableData",
    "InvalidAddressLookupTableIndex",
    "WouldExceedMaxBlockCostLimit",
    "UnsupportedVersion",
    "MissingSignatureForFee",
}
LAMPORTS_PER_SIGNATURE = 5000
MAX_COMPUTE_UNITS = 1_400_000
# Without a limit the runtime reserves 3,000 units per builtin's instruction and 200,000 per other one
# (`yieldcli/solana/compute_units.py`); the runtime this sandbox runs (LiteSVM) counts the vote program's
# as another's, so its getFeeForMessage says what it charges.
SANDBOX_BUILTINS = BUILTIN_PROGRAMS - {VOTE_PROGRAM}


class RuntimeRpcError(Exception):
    """A refusal the RPC server sends back as a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass
class TxRecord:
    """A landed transaction, as getSignatureStatuses and getTransaction describe it."""

    signature: str
    slot: int
    err: Any  # the RPC's JSON form; None on success
    logs: list[str]
    fee: int
    units_consumed: int
    transaction: str  # base64
    version: Any  # 0 or "legacy"
    block_time: int
    pre_balances: list[int]
    post_balances: list[int]
    loaded_writable: list[str] = field(default_factory=list)
    loaded_readonly: list[str] = field(default_factory=list)
    # Token balances as getTransaction gives them: [{accountIndex, mint, owner, programId, uiTokenAmount}]
    pre_token_balances: list[dict[str, Any]] = field(default_factory=list)
    post_token_balances: list[dict[str, Any]] = field(default_factory=list)
    inner_instructions: list[dict[str, Any]] = field(default_factory=list)
    compute_unit_price: int = 0
    # What the last program to set it returned: {"programId", "data": [base64, "base64"]}; None if none did.
    return_data: dict[str, Any] | None = None


@dataclass(frozen=True)
class SendOutcome:
    signature: str
    landed: bool
    record: TxRecord | None
    fault: str | None = None  # what kept it from landing or made it fail: expire, pending, fail, dropped, underpriced


def live(account: Account | None) -> Account | None:
    """None for an account that does not exist (closed accounts linger with 0 lamports)."""
    return account if account is not None and (account.lamports or account.data) else None


def return_data_json(meta: Any) -> dict[str, Any] | None:
    """A transaction's return data in the RPC's shape (UiTransactionReturnData). As a validator records
    it: trailing zero bytes cut off, and None when nothing is left (no program set any)."""
    found = meta.return_data()
    data = bytes(found.data).rstrip(b"\x00") if found is not None else b""
    if found is None or not data:
        return None
    return {"programId": str(found.program_id), "data": [base64.b64encode(data).decode("ascii"), "base64"]}


def err_json(result: FailedTransactionMetadata) -> Any:
    return json.loads(result.to_json())["err"]


def with_blockhash(tx: VersionedTransaction, blockhash: Any) -> VersionedTransaction:
    message = tx.message
    new: MessageV0 | Message
    if isinstance(message, MessageV0):
        new = MessageV0(
            message.header, message.account_keys, blockhash, message.instructions, message.address_table_lookups
        )
    else:
        h = message.header
        new = Message.new_with_compiled_instructions(
            h.num_required_signatures,
            h.num_readonly_signed_accounts,
            h.num_readonly_unsigned_accounts,
            message.account_keys,
            blockhash,
            message.instructions,
        )
    return VersionedTransaction.populate(new, tx.signatures)


def decode_wire_transaction(data: bytes) -> VersionedTransaction:
    try:
        return VersionedTransaction.from_bytes(data)
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise RuntimeRpcError(
            -32602, f"invalid transaction: failed to deserialize VersionedTransaction: {exc}"
        ) from None


def compute_budget(message: Any) -> tuple[int, int]:
    """(compute-unit price in microlamports, compute-unit limit) a message asks for, as a validator reads them."""
    keys = list(message.account_keys)
    price, limit = 0, None
    for ix in message.instructions:
        if str(keys[ix.program_id_index]) != programs.COMPUTE_BUDGET_PROGRAM:
            continue
        data = bytes(ix.data)
        if len(data) == 9 and data[0] == 3:
            price = struct.unpack_from("<Q", data, 1)[0]
        elif len(data) == 5 and data[0] == 2:
            limit = struct.unpack_from("<I", data, 1)[0]
    if limit is None:
        limit = default_unit_limit((str(keys[ix.program_id_index]) for ix in message.instructions), SANDBOX_BUILTINS)
    return price, min(limit, MAX_COMPUTE_UNITS)


def fee_for(message: Any) -> int:
    """Base fee per signature plus the priority fee (price x limit, rounded up), as a validator charges:
    the signatures are the message's and those its precompile instructions declare (each data's first
    byte), as agave's fee calculation counts them and the runtime here charges them."""
    price, limit = compute_budget(message)
    signatures: int = message.header.num_required_signatures  # a legacy or v0 message's header: a u8
    keys = [str(k) for k in message.account_keys]
    signatures += sum(
        bytes(ix.data)[0] for ix in message.instructions if keys[ix.program_id_index] in PRECOMPILES and bytes(ix.data)
    )
    return signatures * LAMPORTS_PER_SIGNATURE + -(-price * limit // 1_000_000)


# The programs whose every declared signature the runtime charges as one of the message's.
PRECOMPILES = frozenset(
    (
        "Ed25519SigVerify111111111111111111111111111",
        "KeccakSecp256k11111111111111111111111111111",
        "Secp256r1SigVerify1111111111111111111111111",
    )
)
