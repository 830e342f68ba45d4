"""Wait for a sent transaction as the Solana CLI does, ending only on proof (`proof.py`): statuses
until the commitment and the transaction itself, its own blockhash (or durable nonce) as deadline,
the same signed bytes sent again every ~2 s until the cluster sees them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from yieldcli.chain.rpc.types import AccountInfo, SignatureStatus, TransactionRecord
from yieldcli.chain.transact.outcomes import Confirmed, Expired, Failed, Waited, pending
from yieldcli.chain.transact.proof import Lifetime, RpcDisagrees, Witness
from yieldcli.errors import YieldError
from yieldcli.solana.cluster import DEFAULT_COMMITMENT, DEFAULT_CONFIRM_TIMEOUT, commitment_rank


class ConfirmRpc(Protocol):
    async def signature_statuses(
        self, signatures: Sequence[Signature | str], *, search_history: bool = True
    ) -> list[SignatureStatus | None]: ...
    async def height_and_slot(
        self, commitment: str | None = None, *, min_context_slot: int | None = None
    ) -> tuple[int, int]: ...
    async def blockhash_validity(
        self, blockhash: str, commitment: str | None = None, *, min_context_slot: int | None = None
    ) -> tuple[bool, int]: ...
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
    lifetime: Lifetime,
    commitment: str = DEFAULT_COMMITMENT,
    timeout_s: float = DEFAULT_CONFIRM_TIMEOUT,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    *,
    poll_interval: float = 0.5,
    on_status: Callable[[str | None], Any] | None = None,
    rebroadcast: Rebroadcast | None = None,
    paced: bool = False,
) -> Waited:
    """Poll until `signature` is proven landed, failed or never to land (`proof.py`), or `timeout_s` passes.

    Any error while polling (the network, an RPC's unreadable answer, a node behind) does not end the
    wait: it is reported in `Pending.last_error`. An RPC that contradicts itself ends it in
    `RpcDisagrees` (raised, the signature on it). With `rebroadcast`, the transaction is sent again
    while unseen. The outcome is the pipeline's own (`outcomes.py`), its `result` holding what the
    wait learnt.
    """
    commitment_rank(commitment)
    witness = Witness(rpc, str(signature), commitment, paced=paced, clock=clock)  # paced: a public cluster
    deadline = clock() + timeout_s
    last_seen: str | None = None
    last_error: str | None = None
    unconfirmed: str | None = None  # a status at the commitment whose transaction the RPC does not give (yet)
    while True:
        try:
            ended = await _look(witness, lifetime, rebroadcast, clock)
            last_error = None
            if isinstance(ended, (Confirmed, Failed, Expired)):
                return ended
            if ended is not None:
                last_seen = ended.confirmation_status
                unconfirmed = _unproven(ended) if ended.reached(commitment) else None
        except RpcDisagrees:
            raise
        except YieldError as exc:
            last_error = exc.message
        if on_status is not None:
            on_status(last_seen)
        if clock() >= deadline:
            if unconfirmed is not None:  # to the end: no lag, the RPC's two words disagree
                raise witness.disagrees(unconfirmed)
            return pending(witness.signature, last_seen, last_error)
        await sleep(min(poll_interval, max(0.0, deadline - clock())))


async def _look(
    witness: Witness, lifetime: Lifetime, rebroadcast: Rebroadcast | None, clock: Callable[[], float]
) -> Confirmed | Failed | Expired | SignatureStatus | None:
    """One round: an outcome proven, else the status seen (None: not seen)."""
    status = await witness.status()
    if status is None:
        gone = await witness.never_landed(lifetime)
        if gone is not None:
            return gone
        if rebroadcast is not None:
            await rebroadcast.tick(clock())
        return None
    if not status.reached(witness.commitment):
        return status  # seen, not yet at the commitment asked (a failure too: a fork may drop it)
    proven = await witness.landed(status)
    if proven is not None:
        return proven
    # The status says it reached the commitment, the node does not give the transaction: once its
    # lifetime is over that is no lag but a contradiction.
    if await witness.lifetime_over(lifetime) is not None:
        raise witness.disagrees(
            f"its status says {status.confirmation_status or 'finalized'} in slot {status.slot}, yet its "
            "lifetime is over and the transaction itself is not found"
        )
    return status


def _unproven(status: SignatureStatus) -> str:
    return (
        f"it reports the transaction {status.confirmation_status or 'finalized'} in slot {status.slot} "
        "but does not give the transaction itself"
    )
