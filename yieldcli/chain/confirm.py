"""Wait for a sent transaction as the Solana CLI does: statuses until the commitment, blockhash as deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from solders.signature import Signature

from yieldcli.chain.rpc import SignatureStatus, TransactionRecord, commitment_rank, describe_error
from yieldcli.errors import NetworkError, YieldError


class ConfirmRpc(Protocol):
    async def signature_statuses(self, signatures: Sequence[Signature | str], *, search_history: bool = True) -> list[SignatureStatus | None]: ...
    async def block_height(self, commitment: str | None = None) -> int: ...
    async def transaction(self, signature: Signature | str, *, commitment: str | None = None) -> TransactionRecord | None: ...


@dataclass(frozen=True)
class Confirmed:
    signature: str
    slot: int
    commitment: str  # the status reached, at least the one asked for


@dataclass(frozen=True)
class Failed:
    signature: str
    slot: int
    err: Any  # the RPC's JSON form of the transaction error
    logs: tuple[str, ...] | None  # None when the node could not give them

    @property
    def reason(self) -> str:
        return describe_error(self.err)


@dataclass(frozen=True)
class Expired:
    signature: str
    last_valid_block_height: int
    block_height: int  # the height seen past the deadline; the transaction can no longer land


@dataclass(frozen=True)
class Pending:
    signature: str
    last_status: str | None  # the commitment seen so far, None if the cluster has not seen it
    last_error: str | None = None  # a network error from the last poll, if any


Outcome = Confirmed | Failed | Expired | Pending


async def wait_for(
    rpc: ConfirmRpc,
    signature: Signature | str,
    last_valid_block_height: int,
    commitment: str = "confirmed",
    timeout_s: float = 60.0,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    *,
    poll_interval: float = 0.5,
    on_status: Callable[[str | None], Any] | None = None,
) -> Outcome:
    """Poll until `signature` reaches `commitment`, fails, expires, or `timeout_s` passes.

    Expired means the block height went past `last_valid_block_height` while the cluster still did
    not know the signature, and one more look found nothing: the transaction can no longer land.
    Network errors while polling do not end the wait; they are reported in `Pending.last_error`.
    """
    commitment_rank(commitment)
    sig = str(signature)
    deadline = clock() + timeout_s
    last_seen: str | None = None
    last_error: str | None = None
    while True:
        try:
            status = await _status(rpc, sig)
            if status is None:
                height = await rpc.block_height(commitment)
                if height > last_valid_block_height:
                    # It may have landed just before the deadline: look once more before saying so.
                    status = await _status(rpc, sig)
                    if status is None:
                        return Expired(sig, last_valid_block_height, height)
            last_error = None
        except NetworkError as exc:
            status, last_error = None, exc.message
        if status is not None:
            if status.err is not None:
                return Failed(sig, status.slot, status.err, await _logs(rpc, sig))
            if status.reached(commitment):
                return Confirmed(sig, status.slot, status.confirmation_status or "finalized")
            last_seen = status.confirmation_status
        if on_status is not None:
            on_status(last_seen)
        if clock() >= deadline:
            return Pending(sig, last_seen, last_error)
        await sleep(min(poll_interval, max(0.0, deadline - clock())))


async def _status(rpc: ConfirmRpc, sig: str) -> SignatureStatus | None:
    statuses = await rpc.signature_statuses([sig], search_history=True)
    return statuses[0] if statuses else None


async def _logs(rpc: ConfirmRpc, sig: str) -> tuple[str, ...] | None:
    try:
        record = await rpc.transaction(sig)
    except YieldError:
        return None
    return record.logs if record is not None else None
