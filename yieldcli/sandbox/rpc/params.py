"""Reading JSON-RPC parameters and writing accounts in the shapes Solana clients parse."""

from __future__ import annotations

import base64
import json
import threading
from typing import Any

from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from yieldcli.addresses import b58decode
from yieldcli.sandbox.runtime import Runtime, RuntimeRpcError, decode_wire_transaction

API_VERSION = "2.2.0"


# The commitment the request being answered on this thread asked for (None: finalized, a node's default).
_asked = threading.local()


def set_commitment(commitment: str | None) -> None:
    _asked.commitment = commitment


def asked_commitment() -> str | None:
    value: str | None = getattr(_asked, "commitment", None)
    return value


def account_commitment() -> str:
    """The level account reads answer at: the one asked for; with none, finalized, as a node's default."""
    return asked_commitment() or "finalized"


class Answering:
    """What every group of methods answers from: the runtime, and the `context` wrapping."""

    runtime: Runtime

    def _context(self, value: Any) -> dict[str, Any]:
        slot = self.runtime.commitment_slot(asked_commitment())
        return {"context": {"apiVersion": API_VERSION, "slot": slot}, "value": value}

    def _context_at(self, slot: int, value: Any) -> dict[str, Any]:
        """`_context` for a value read at `slot` (an account at the asked commitment's slot)."""
        return {"context": {"apiVersion": API_VERSION, "slot": slot}, "value": value}

    def _asked_slot(self) -> int:
        """The slot of the commitment the request asked for."""
        return self.runtime.commitment_slot(asked_commitment())

    def _decimals(self, mint: str) -> int | None:
        return self.runtime.mint_decimals(Pubkey.from_string(mint))


class Invalid(RuntimeRpcError):
    def __init__(self, message: str):
        super().__init__(-32602, message)


def dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "error": error, "id": rid}


_MISSING = object()


def param(params: list[Any], index: int, default: Any = _MISSING) -> Any:
    if index < len(params):
        return params[index]
    if default is _MISSING:
        raise Invalid(f"Invalid params: missing parameter {index + 1}")
    return default


def options(params: list[Any], index: int) -> dict[str, Any]:
    """The configuration object at `index`; a field given as null is as if left out (as a validator reads it)."""
    value = param(params, index, None)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid(f"Invalid params: parameter {index + 1} must be a configuration object")
    return {k: v for k, v in value.items() if v is not None}


def encoding_options(params: list[Any], index: int) -> dict[str, Any]:
    """`options`, where an older client may give the encoding alone, as a bare string (getBlock, getTransaction)."""
    value = param(params, index, None)
    return {"encoding": value} if isinstance(value, str) else options(params, index)


def pubkey(value: Any) -> Pubkey:
    if isinstance(value, str):
        try:
            raw = b58decode(value)
        except ValueError:
            raw = b""
        if len(raw) == 32:
            return Pubkey.from_bytes(raw)
    raise Invalid(f"Invalid param: {value!r} is not a valid public key")


def b64(value: Any) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (ValueError, TypeError):
        raise Invalid("Invalid params: not base64 data") from None


def decode_tx(value: Any, encoding: str) -> VersionedTransaction:
    if not isinstance(value, str):
        raise Invalid("Invalid params: the transaction must be a string")
    if encoding == "base64":
        raw = b64(value)
    elif encoding == "base58":
        try:
            raw = b58decode(value)
        except ValueError:
            raise Invalid("Invalid params: not base58 data") from None
    else:
        raise Invalid(f"Invalid params: unsupported encoding {encoding!r}; use base58 or base64")
    return decode_wire_transaction(raw)
