"""Accounts and transactions in the encodings a validator offers: base58, base64, base64+zstd (accounts),
json (transactions), jsonParsed (both)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from solders.account import Account
from solders.message import MessageV0
from solders.transaction import VersionedTransaction

import yieldcli.sandbox.rpc.parsed as parsed
from yieldcli.addresses import b58decode, b58encode
from yieldcli.sandbox.chain.history import writable_flags
from yieldcli.sandbox.chain.records import TxRecord
from yieldcli.sandbox.runtime import RuntimeRpcError

ACCOUNT_ENCODINGS = ("binary", "base58", "base64", "base64+zstd", "jsonParsed")
TRANSACTION_ENCODINGS = ("binary", "base58", "base64", "json", "jsonParsed")
DETAILS = ("full", "accounts", "signatures", "none")
# A validator refuses base58 for account data longer than this.
MAX_BASE58_BYTES = 128

MintDecimals = Callable[[str], int | None]


def unknown(value: Any, allowed: tuple[str, ...]) -> RuntimeRpcError:
    listed = ", ".join(f"`{a}`" for a in allowed)
    return RuntimeRpcError(-32602, f"Invalid params: unknown variant `{value}`, expected one of {listed}.")


def zstd_frame(data: bytes) -> bytes:
    """A zstd frame holding `data` in raw blocks: what any zstd decoder reads back, with no codec here."""
    out = bytearray(b"\x28\xb5\x2f\xfd")
    out += b"\xa0"  # single segment, 4-byte content size, no checksum, no dictionary
    out += len(data).to_bytes(4, "little")
    chunks = [data[i : i + 128 * 1024] for i in range(0, len(data), 128 * 1024)] or [b""]
    for n, chunk in enumerate(chunks):
        last = 1 if n == len(chunks) - 1 else 0
        out += ((len(chunk) << 3) | last).to_bytes(3, "little")  # block type 0: raw
        out += chunk
    return bytes(out)


def account_json(
    account: Account | None,
    encoding: str,
    data_slice: dict[str, Any] | None = None,
    mint_decimals: MintDecimals | None = None,
) -> dict[str, Any] | None:
    if account is None:
        return None
    whole = bytes(account.data)
    data = whole
    if data_slice:
        offset, length = int(data_slice.get("offset", 0)), int(data_slice.get("length", len(data)))
        data = data[offset : offset + length]
    owner = str(account.owner)
    encoded: Any
    if encoding == "jsonParsed" and mint_decimals is not None and not data_slice:
        encoded = parsed.account(owner, whole, mint_decimals)
    else:
        encoded = None
    if encoded is not None:
        pass
    elif encoding in ("base64", "jsonParsed"):
        # jsonParsed falls back to base64, as the real RPC does for accounts it cannot parse.
        encoded = [base64.b64encode(data).decode("ascii"), "base64"]
    elif encoding == "base64+zstd":
        encoded = [base64.b64encode(zstd_frame(data)).decode("ascii"), "base64+zstd"]
    elif encoding in ("base58", "binary"):
        if len(data) > MAX_BASE58_BYTES:
            raise RuntimeRpcError(
                -32600, "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding."
            )
        encoded = [b58encode(data), "base58"] if encoding == "base58" else b58encode(data)
    else:
        raise unknown(encoding, ACCOUNT_ENCODINGS)
    return {
        "data": encoded,
        "executable": account.executable,
        "lamports": account.lamports,
        "owner": owner,
        # Every account is rent-exempt now: a validator reports u64::MAX, whatever the runtime keeps.
        "rentEpoch": RENT_EXEMPT_EPOCH,
        "space": len(whole),
    }


RENT_EXEMPT_EPOCH = 2**64 - 1


def _status(err: Any) -> dict[str, Any]:
    return {"Ok": None} if err is None else {"Err": err}


def transaction_with_meta(
    record: TxRecord, encoding: str, *, with_version: bool, details: str = "full", rewards: bool = True
) -> dict[str, Any]:
    """getTransaction's answer without its slot and blockTime, or one entry of getBlock's `transactions`."""
    if encoding not in TRANSACTION_ENCODINGS:
        raise unknown(encoding, TRANSACTION_ENCODINGS)
    raw = base64.b64decode(record.transaction)
    tx = VersionedTransaction.from_bytes(raw)
    keys = [str(k) for k in tx.message.account_keys]
    loaded = record.loaded_writable + record.loaded_readonly
    meta: dict[str, Any] = {
        "err": record.err,
        "status": _status(record.err),
        "fee": record.fee,
        "preBalances": record.pre_balances,
        "postBalances": record.post_balances,
        "preTokenBalances": record.pre_token_balances,
        "postTokenBalances": record.post_token_balances,
    }
    if rewards:
        meta["rewards"] = []
    out: dict[str, Any] = {"meta": meta}
    if details == "accounts":
        out["transaction"] = {
            "signatures": [str(s) for s in tx.signatures],
            "accountKeys": _keys_parsed(tx, keys, record),
        }
    elif encoding == "base58" or encoding == "binary":
        out["transaction"] = b58encode(raw) if encoding == "binary" else [b58encode(raw), "base58"]
    elif encoding == "base64":
        out["transaction"] = [record.transaction, "base64"]
    else:
        out["transaction"] = {
            "signatures": [str(s) for s in tx.signatures],
            "message": _message(tx, keys, record, encoding),
        }
    if details == "full":
        all_keys = keys + loaded
        meta["innerInstructions"] = (
            [_inner_parsed(entry, all_keys) for entry in record.inner_instructions]
            if encoding == "jsonParsed"
            else record.inner_instructions
        )
        meta["logMessages"] = record.logs
        if encoding != "jsonParsed":
            meta["loadedAddresses"] = {"writable": record.loaded_writable, "readonly": record.loaded_readonly}
        if record.return_data is not None:
            meta["returnData"] = record.return_data
        meta["computeUnitsConsumed"] = record.units_consumed
    if with_version:
        out["version"] = record.version
    return out


def _message(tx: VersionedTransaction, keys: list[str], record: TxRecord, encoding: str) -> dict[str, Any]:
    message = tx.message
    h = message.header
    all_keys = keys + record.loaded_writable + record.loaded_readonly
    if encoding == "jsonParsed":
        out: dict[str, Any] = {
            "accountKeys": _keys_parsed(tx, keys, record),
            "recentBlockhash": str(message.recent_blockhash),
            "instructions": [
                parsed.instruction(
                    all_keys[ix.program_id_index], [all_keys[a] for a in bytes(ix.accounts)], bytes(ix.data), None
                )
                for ix in message.instructions
            ],
        }
    else:
        out = {
            "accountKeys": keys,
            "header": {
                "numRequiredSignatures": h.num_required_signatures,
                "numReadonlySignedAccounts": h.num_readonly_signed_accounts,
                "numReadonlyUnsignedAccounts": h.num_readonly_unsigned_accounts,
            },
            "recentBlockhash": str(message.recent_blockhash),
            "instructions": [
                {
                    "programIdIndex": ix.program_id_index,
                    "accounts": list(bytes(ix.accounts)),
                    "data": b58encode(bytes(ix.data)),
                    "stackHeight": None,
                }
                for ix in message.instructions
            ],
        }
    if isinstance(message, MessageV0):
        out["addressTableLookups"] = [
            {
                "accountKey": str(lookup.account_key),
                "writableIndexes": list(bytes(lookup.writable_indexes)),
                "readonlyIndexes": list(bytes(lookup.readonly_indexes)),
            }
            for lookup in message.address_table_lookups
        ]
    return out


def _keys_parsed(tx: VersionedTransaction, keys: list[str], record: TxRecord) -> list[dict[str, Any]]:
    signers = tx.message.header.num_required_signatures
    writable = writable_flags(tx.message.header, len(keys))
    out = [
        {"pubkey": key, "signer": i < signers, "source": "transaction", "writable": writable[i]}
        for i, key in enumerate(keys)
    ]
    out += [{"pubkey": k, "signer": False, "source": "lookupTable", "writable": True} for k in record.loaded_writable]
    out += [{"pubkey": k, "signer": False, "source": "lookupTable", "writable": False} for k in record.loaded_readonly]
    return out


def _inner_parsed(entry: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    return {
        "index": entry["index"],
        "instructions": [
            parsed.instruction(
                keys[ix["programIdIndex"]],
                [keys[a] for a in ix["accounts"]],
                b58decode(ix["data"]),
                ix.get("stackHeight"),
            )
            for ix in entry["instructions"]
        ],
    }
