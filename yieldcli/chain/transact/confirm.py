"""Wait for a sent transaction as the Solana CLI does: statuses until the commitment, blockhash (or
durable nonce) as deadline, the same signed bytes sent again every ~2 s until the cluster sees them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from yieldcli.chain.rpc.types import AccountInfo, SignatureStatus, TransactionRecord
from yieldcli.chain.transact.outcomes import Expired, Waited, confirmed, expired, failed, pending
from yieldcli.chain.tx.nonce import NonceLifetime, nonce_moved_on
from yieldcli.errors import NetworkError, YieldError
from yieldcli.solana.cluster import DEFAULT_COMMITMENT, DEFAULT_CONFIRM_TIMEOUT, commitment_rank


class ConfirmRpc(Protocol):
    async def signature_statuses(
        self, signatures: Sequence[Signature | str], *, search_history: bool = True
    ) -> list[SignatureStatus | None]: ...
    async def block_height(self, commitment: str | None = None) -> int: ...
    async def transaction(
        self, signature: Signature | str, *, commitment: str | None = None
    ) -> TransactionRecord | None: ...
    # Used only to wait for a durable-nonce transaction.
    async def account_info(self, address: Pubkey, *, commitment: str | None = None) -> AccountInfo | None: ...


class SendRpc(Protocol):
    async def send(self, tx: VersionedTransaction | bytes, *, skip_preflight: bool = False) -> Signature: ...


RESEND_INTERVAL_S = 2.0


class Rebroadcast:
    """Sends the same signed bytes again, every `interval` seconds, while the cluster has not seen them.

    Never a new signature: the bytes are the ones already sent, so at most one copy can land. Once
    the cluster reports the signature (processed or more) it is in a block and resending stops, as
    the Solana CLI does. `sends` counts every send accepted by the RPC, the first one included.
    """

    def __init__(self, rpc: SendRpc, wire: bytes, *, interval: float = RESEND_INTERVAL_S, sends: int = 1) -> None:
        self.rpc = rpc
        self.wire = bytes(wire)
        self.interval = interval
        self.sends = sends
        self.failed_sends = 0
        self.last_error: str | None = None
        self._due: float | None = None

    async def tick(self, now: float) -> None:
        if self._due is None:  # the first tick starts the schedule: the first send has just happened
            self._due = now + self.interval
        if now < self._due:
            return
        self._due = now + self.interval
        try:
            # Preflight ran on the first send; a copy sent after it landed would only fail preflight.
            await self.rpc.send(self.wire, skip_preflight=True)
        except YieldError as exc:
            self.failed_sends += 1
            self.last_error = exc.message
            return
        self.sends += 1


async def wait_for(
    rpc: ConfirmRpc,
    signature: Signature | str,
    last_valid_block_height: int | None,
    commitment: str = DEFAULT_COMMITMENT,
    timeout_s: float = DEFAULT_CONFIRM_TIMEOUT,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    *,
    poll_interval: float = 0.5,
    on_status: Callable[[str | None], Any] | None = None,
    rebroadcast: Rebroadcast | None = None,
    nonce: NonceLifetime | None = None,
) -> Waited:
    """Poll until `signature` reaches `commitment`, fails, expires, or `timeout_s` passes.

    Expired means the block height went past `last_valid_block_height` (for a durable-nonce
    transaction: its nonce account moved on) while the cluster still did not know the signature,
    and one more look found nothing: the transaction can no longer land. Network errors while
    polling do not end the wait; they are reported in `Pending.last_error`. With `rebroadcast`,
    the transaction is sent again while unseen and not expired. The outcome is the pipeline's own
    (`outcomes.py`), its `result` holding what the wait learnt.
    """
    commitment_rank(commitment)
    if nonce is None and last_valid_block_height is None:
        raise ValueError("a transaction without a durable nonce needs its last valid block height")
    sig = str(signature)
    deadline = clock() + timeout_s
    last_seen: str | None = None
    last_error: str | None = None
    while True:
        try:
            status = await _status(rpc, sig)
            if status is None:
                expired = await _lifetime_over(rpc, sig, commitment, last_valid_block_height, nonce)
                if expired is not None:
                    # It may have landed just before the deadline (landing advances a nonce, too):
                    # look once more before saying so.
                    status = await _status(rpc, sig)
                    if status is None:
                        return expired
                elif rebroadcast is not None:
                    await rebroadcast.tick(clock())
            last_error = None
        except NetworkError as exc:
            status, last_error = None, exc.message
        if status is not None:
            if status.err is not None:
                return failed(sig, status.slot, status.err, await _logs(rpc, sig))
            if status.reached(commitment):
                return confirmed(sig, status.slot, status.confirmation_status or "finalized")
            last_seen = status.confirmation_status
        if on_status is not None:
            on_status(last_seen)
        if clock() >= deadline:
            return pending(sig, last_seen, last_error)
        await sleep(min(poll_interval, max(0.0, deadline - clock())))


async def _lifetime_over(
    rpc: ConfirmRpc, sig: str, commitment: str, last_valid_block_height: int | None, nonce: NonceLifetime | None
) -> Expired | None:
    """The Expired outcome if the blockhash (or nonce) can no longer carry the transaction, else None."""
    if nonce is not None:
        return expired(sig, None, None, str(nonce.account)) if await nonce_moved_on(rpc, nonce) else None
    assert last_valid_block_height is not None
    height = await rpc.block_height(commitment)
    return expired(sig, last_valid_block_height, height) if height > last_valid_block_height else None


async def _status(rpc: ConfirmRpc, sig: str) -> SignatureStatus | None:
    statuses = await rpc.signature_statuses([sig], search_history=True)
    return statuses[0] if statuses else None


async def _logs(rpc: ConfirmRpc, sig: str) -> tuple[str, ...] | None:
    try:
        record = await rpc.transaction(sig)
    except YieldError:
        return None
    return record.logs if record is not None else None
