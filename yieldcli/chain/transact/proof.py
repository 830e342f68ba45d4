"""What the chain shows of a sent transaction, never inferred: landed, failed, or never to land.

Each verdict rests on the RPC's own answers, asked in an order that makes them proof:
- **landed** (or **failed**): its status at the commitment asked, then the transaction itself at that
  commitment (`getTransaction`), the two agreeing on success or failure and on the slot;
- **never to land**: its own lifetime over (the block height past its deadline, then its *own*
  blockhash no longer valid, asked after; a durable nonce: its nonce account moved on), then, asked
  after that, its signature unknown with the history searched and the transaction itself not found.
A send error, a timeout, a deadline taken from another blockhash: none of these is proof.

An RPC that contradicts itself (a status the transaction denies, a height that goes backwards, a
transaction it gives whose status it does not know) proves nothing either: `RpcDisagrees`, an
outcome "may have landed" whose record is kept. Every height and validity is asked of a node at
least as far along as the last one seen (`minContextSlot`): a pool of nodes behind one URL cannot
answer from one that lags, so a height that goes backwards is the RPC's contradiction, not a lag.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yieldcli.chain.transact.outcomes import Confirmed, Expired, Failed, confirmed, expired, failed, with_signature
from yieldcli.errors import NetworkError, TransactionPending
from yieldcli.solana.cluster import commitment_rank

if TYPE_CHECKING:
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.rpc.types import SignatureStatus, TransactionRecord
    from yieldcli.chain.transact.journal import InFlight


class RpcDisagrees(TransactionPending):
    """The RPC's answers contradict one another: nothing about the transaction is proven, it may have landed."""

    kind = "tx.pending.rpc_disagrees"


@dataclass(frozen=True)
class Lifetime:
    """What ends a transaction's life: its own blockhash and deadline, or its durable nonce."""

    blockhash: str | None  # its own recent blockhash; None for a durable nonce (or a record written before)
    last_valid_block_height: int | None  # None for a durable nonce
    nonce_account: str | None = None
    nonce_value: str | None = None
    # A signer of it (the fee payer, the wallet): a landed transaction is among the signatures naming it,
    # an index of its own that a node missing the status and the transaction still has to agree with.
    signer: str | None = None

    @classmethod
    def of(cls, tx: VersionedTransaction, last_valid_block_height: int | None) -> Lifetime:
        from yieldcli.chain.transact.checks import message_of
        from yieldcli.chain.tx.nonce import nonce_lifetime

        payer = str(tx.message.account_keys[0])
        nonce = nonce_lifetime(message_of(tx))
        if nonce is not None:
            return cls(None, None, str(nonce.account), str(nonce.value), payer)
        return cls(str(tx.message.recent_blockhash), last_valid_block_height, signer=payer)

    @classmethod
    def of_entry(cls, entry: InFlight) -> Lifetime:
        return cls(entry.blockhash, entry.last_valid_block_height, entry.nonce_account, entry.nonce_value, entry.wallet)


def _at_least_confirmed(commitment: str) -> str:
    """Heights, validity and the transaction itself are read at the commitment asked, never below
    confirmed: a processed block may be on a fork that is dropped (and getTransaction takes no processed)."""
    return commitment if commitment_rank(commitment) >= commitment_rank("confirmed") else "confirmed"


SLOT_SECONDS = 0.4  # a public cluster's slot: no block comes faster
PACE_SLACK = 8  # blocks: a first read from a node a little behind, the rounding of two reads


class Witness:
    """One RPC questioned about one signature; it remembers the furthest slot and height it was shown."""

    def __init__(
        self,
        rpc: Any,
        signature: str,
        commitment: str,
        *,
        paced: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rpc = rpc
        self.signature = signature
        self.commitment = commitment
        self.reading = _at_least_confirmed(commitment)
        self.slot: int | None = None  # the furthest context slot an answer came from
        self.height: int | None = None  # the highest block height shown
        # `paced`: a public cluster, whose blocks come no faster than its slots (400 ms): a height that
        # runs ahead of the clock is a node on another fork or a lie, never the cluster's.
        self.paced, self.clock = paced, clock
        self._first: tuple[int, float] | None = None  # the first height read, and when

    def disagrees(self, what: str) -> RpcDisagrees:
        return with_signature(
            RpcDisagrees(f"the RPC disagrees with itself: {what}; transaction {self.signature} may have landed"),
            self.signature,
        )

    async def status(self) -> SignatureStatus | None:
        """Its status, the history searched (an old landing counts), from a node at least as far along as
        the furthest slot seen: a node behind's "unknown" is no answer (`NetworkError`, asked again)."""
        statuses, slot = await self.rpc.signature_statuses_at([self.signature], search_history=True)
        if self.slot is not None and slot < self.slot:
            raise NetworkError(
                f"the RPC answered the status of {self.signature} from slot {slot:,}, behind slot {self.slot:,} "
                "it already showed",
                kind="network.rpc.behind",
            )
        return statuses[0] if statuses else None

    async def landed(self, status: SignatureStatus) -> Confirmed | Failed | None:
        """Proven landed (or failed) once the transaction itself agrees with `status`, which reached the
        commitment; None while the node does not give the transaction yet."""
        record = await self.rpc.transaction(self.signature, commitment=self.reading)
        if record is None:
            return None
        if (record.err is None) != (status.err is None) or record.slot != status.slot:
            raise self.disagrees(f"its status says {_said(status)}, the transaction itself {_said(record)}")
        if record.err is not None:
            return failed(self.signature, record.slot, record.err, record.logs)
        return confirmed(self.signature, record.slot, status.confirmation_status or "finalized")

    async def lifetime_over(self, lifetime: Lifetime) -> Expired | None:
        """The outcome "expired" if its own lifetime is shown to be over, else None (not proof of
        anything yet: the signature is asked about after, by `never_landed`)."""
        if lifetime.nonce_account is not None and lifetime.nonce_value is not None:
            from solders.hash import Hash
            from solders.pubkey import Pubkey

            from yieldcli.chain.tx.nonce import nonce_used

            account = lifetime.nonce_account
            used = await nonce_used(self.rpc, Pubkey.from_string(account), Hash.from_string(lifetime.nonce_value))
            return expired(self.signature, None, None, account) if used else None
        if lifetime.last_valid_block_height is None:
            return None  # no deadline known: never assumed gone
        height = await self._height()
        if height <= lifetime.last_valid_block_height:
            return None
        if lifetime.blockhash is not None:
            # The deadline may come from another blockhash than its own (a service's transaction, an
            # answer cached by the provider): its own blockhash's validity is what the chain says.
            valid, slot = await self.rpc.blockhash_validity(
                lifetime.blockhash, self.reading, min_context_slot=self.slot
            )
            self._at(slot)
            if valid:
                return None
        return expired(self.signature, lifetime.last_valid_block_height, height)

    async def never_landed(self, lifetime: Lifetime) -> Expired | None:
        """Proven never to land: its lifetime over, then (asked after) its signature unknown with the
        history searched and the transaction itself not found. None when not proven; a transaction
        the RPC gives whose status it does not know is its contradiction."""
        over = await self.lifetime_over(lifetime)
        if over is None or await self.status() is not None:
            return None
        record = await self.rpc.transaction(self.signature, commitment=self.reading)
        if record is not None:
            raise self.disagrees(
                f"it does not know the signature's status, yet gives the transaction (slot {record.slot})"
            )
        if lifetime.last_valid_block_height is not None and self.height is not None and self.slot is not None:
            # Its blockhash's block is at least as many slots back as blocks (150 before its deadline): a
            # node whose history starts after that may never have seen it land (one restarted from a snapshot).
            latest_start = self.slot - (self.height - lifetime.last_valid_block_height + 150)
            first = await self.rpc.first_available_block()
            if first > max(latest_start, 0):  # (a deadline made up in a test can put it before genesis)
                raise NetworkError(
                    f"the RPC's history starts at slot {first:,}, after {self.signature} could have landed: "
                    "its word that the transaction is unknown proves nothing",
                    kind="network.rpc.history",
                )
        if lifetime.signer is not None:
            # A third index: the signatures naming its signer. One that lists it landed, whatever the others said.
            named = await self.rpc.recent_signatures_of(
                lifetime.signer, commitment=self.reading, min_context_slot=self.slot
            )
            if self.signature in named:
                raise self.disagrees(
                    "it does not know the signature's status nor the transaction, yet lists it among the "
                    f"signatures of {lifetime.signer}"
                )
        return over

    async def _height(self) -> int:
        height: int
        slot: int
        height, slot = await self.rpc.height_and_slot(self.reading, min_context_slot=self.slot)
        if self.height is not None and height < self.height:
            raise self.disagrees(f"the block height went back from {self.height:,} to {height:,}")
        now = self.clock()
        if self._first is None:
            self._first = (height, now)
        elif self.paced and height - self._first[0] > (now - self._first[1]) / SLOT_SECONDS + PACE_SLACK:
            raise self.disagrees(
                f"the block height went from {self._first[0]:,} to {height:,} in {now - self._first[1]:.1f} s, "
                "faster than the cluster makes blocks"
            )
        self.height = height
        self._at(slot)
        return height

    def _at(self, slot: int) -> None:
        if self.slot is None or slot > self.slot:
            self.slot = slot


def _said(found: SignatureStatus | TransactionRecord) -> str:
    return f"{'failed' if found.err is not None else 'succeeded'} in slot {found.slot}"
