"""What the Solana RPC answers, as our types: the adapter in `rpc.py` builds them, everyone else reads them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from solders.hash import Hash
from solders.pubkey import Pubkey

from yieldcli.errors import ExitCode, YieldError
from yieldcli.solana.cluster import commitment_rank


class RpcError(YieldError):
    """The RPC node answered with a JSON-RPC error or an answer that cannot be read: the RPC's fault,
    never the service's (the network's exit code, kind `network.rpc`). Here, not in rpc.py, so that
    the readers rpc.py calls on, such as read_around, can raise it without importing rpc.py round a circle."""

    exit_code = ExitCode.NETWORK
    kind = "network.rpc"

    def __init__(self, message: str, *, code: int | None = None, data: Any = None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.code = code
        self.data = data


@dataclass(frozen=True)
class LatestBlockhash:
    blockhash: Hash
    last_valid_block_height: int
    slot: int


@dataclass(frozen=True)
class AccountInfo:
    address: Pubkey
    lamports: int
    owner: Pubkey
    data: bytes
    executable: bool
    rent_epoch: int


@dataclass(frozen=True)
class SignatureStatus:
    slot: int
    confirmations: int | None  # None once rooted (finalized)
    err: Any  # the RPC's JSON form, e.g. {"InstructionError": [0, {"Custom": 1}]}; None on success
    confirmation_status: str | None  # processed, confirmed, finalized

    def reached(self, commitment: str) -> bool:
        if self.confirmation_status is None:
            # Old nodes leave it out: confirmations None means rooted, anything else only processed.
            return self.confirmations is None or commitment == "processed"
        return commitment_rank(self.confirmation_status) >= commitment_rank(commitment)


@dataclass(frozen=True)
class TokenAmount:
    amount: int
    decimals: int
    ui_amount_string: str


@dataclass(frozen=True)
class TokenBalanceChange:
    address: str
    mint: str | None
    owner: str | None
    pre: int | None  # None when the account did not exist
    post: int | None

    @property
    def delta(self) -> int:
        return (self.post or 0) - (self.pre or 0)


@dataclass(frozen=True)
class Simulation:
    err: Any
    logs: tuple[str, ...]
    units_consumed: int | None
    accounts: tuple[AccountInfo | None, ...]  # post-simulation state of the requested accounts
    token_balances: tuple[TokenBalanceChange, ...]  # requested accounts that are token accounts
    inner_instructions: Any = None  # the RPC's JSON, when asked for

    @property
    def ok(self) -> bool:
        return self.err is None


@dataclass(frozen=True)
class TransactionRecord:
    slot: int
    err: Any
    logs: tuple[str, ...] | None
    fee: int | None


# A JSON-RPC question (method, params) and its answer, as batches carry them (`batch.py`).
Call = tuple[str, list[Any]]


@dataclass(frozen=True)
class Answer:
    """One question's answer: its result, or the error the `Rpc` would have raised for it."""

    method: str
    result: Any = None
    error: YieldError | None = None

    def value(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result

    @contextmanager
    def reading(self) -> Iterator[Any]:
        """Its result, to read inside the block: an answer of the wrong shape is the RPC's error
        (`network.rpc`), never a crash."""
        value = self.value()
        try:
            yield value
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            raise RpcError(f"the RPC answered {self.method} with a response that could not be read") from None

    @property
    def slot(self) -> int | None:
        """The context slot the node answered at (None for answers without a context)."""
        if isinstance(self.result, dict) and isinstance(self.result.get("context"), dict):
            slot = self.result["context"].get("slot")
            return slot if type(slot) is int else None
        return None


def key_of(method: str, params: Sequence[Any]) -> str:
    return method + json.dumps(list(params), sort_keys=True, separators=(",", ":"))
