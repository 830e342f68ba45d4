"""Settle the journal: before a send, what became of every earlier transaction for this wallet and
cluster; asked about one signature, what became of it (`transaction_status`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solders.hash import Hash
from solders.pubkey import Pubkey

from yieldcli.chain.rpc.types import SignatureStatus
from yieldcli.chain.transact.journal import InFlight, Journal
from yieldcli.errors import ConfigError
from yieldcli.solana.transaction_errors import describe_error


@dataclass
class Settled:
    landed: list[tuple[InFlight, SignatureStatus]] = field(default_factory=list)  # succeeded since they were sent
    failed: list[tuple[InFlight, SignatureStatus]] = field(default_factory=list)  # landed and failed: only a fee spent
    expired: list[InFlight] = field(default_factory=list)  # can never land
    pending: list[InFlight] = field(default_factory=list)  # may still land
    block_height: int | None = None  # read before the statuses; None when no entry has a block-height deadline


async def settle(journal: Journal, rpc: Any, cluster: str, wallet: str) -> Settled:
    """Look up every journal entry for `wallet` on `cluster`; drop the failed and the expired.

    Those still pending stay in the journal, and so do those that landed: they are dropped only once
    the user has been told and chose to send again, so a blind retry is refused every time. The
    block height is read before the statuses: a transaction not seen after its deadline had passed
    can never land.
    """
    out = Settled()
    entries = journal.entries(cluster, wallet)
    if not entries:
        return out
    over, out.block_height = await lifetimes_over(rpc, entries)
    statuses = await rpc.signature_statuses([e.signature for e in entries])
    # An answer shorter than asked must not let an entry slip through unsettled: missing means unknown.
    statuses = list(statuses)[: len(entries)] + [None] * (len(entries) - len(statuses))
    for entry, status in zip(entries, statuses, strict=True):
        if status is not None:
            (out.landed if status.err is None else out.failed).append((entry, status))
        elif over[entry.signature]:
            out.expired.append(entry)
        else:
            out.pending.append(entry)
    known = [e.signature for e, _ in out.failed] + [e.signature for e in out.expired]
    if known:
        journal.remove(*known)
    return out


async def lifetimes_over(rpc: Any, entries: list[InFlight]) -> tuple[dict[str, bool], int | None]:
    """By signature: has the entry's blockhash passed (or its durable nonce moved on)? And the block
    height read (None when no entry has a block-height deadline).

    Read BEFORE the statuses: a transaction the cluster does not know after its lifetime was over
    can never land. A nonce moves on when its transaction lands, too, so only a status seen after
    this look tells the two apart.
    """
    from yieldcli.chain.tx.nonce import nonce_used

    over: dict[str, bool] = {}
    height: int | None = None
    if any(e.last_valid_block_height is not None for e in entries):
        height = await rpc.block_height()
    for entry in entries:
        if entry.last_valid_block_height is not None:
            over[entry.signature] = height is not None and height > entry.last_valid_block_height
        elif entry.nonce_account is not None and entry.nonce_value is not None:
            over[entry.signature] = await nonce_used(
                rpc, Pubkey.from_string(entry.nonce_account), Hash.from_string(entry.nonce_value)
            )
        else:
            over[entry.signature] = False  # neither a deadline nor a nonce: never assumed gone
    return over, height


@dataclass(frozen=True)
class TransactionStatus:
    """What became of a transaction, by its signature. `status`: the commitment it reached
    (processed, confirmed, finalized), failed, expired (sent from here, its lifetime over unseen: it
    can never land), pending (sent from here and not seen, and it can still land) or unknown (the RPC
    never saw it, and nothing here says when it was sent)."""

    signature: str
    status: str
    slot: int | None = None  # where it landed
    error: str | None = None  # why it failed on chain
    explorer: str | None = None  # where to see it, once landed
    last_valid_block_height: int | None = None  # sent from here with a blockhash: its deadline
    block_height: int | None = None  # pending: the height read before its status
    nonce_account: str | None = None  # sent from here on a durable nonce
    deadline: str | None = None  # pending: until when it can land, in words

    @property
    def landed(self) -> bool:
        """In a block, and it succeeded (at the commitment in `status`)."""
        return self.status in ("processed", "confirmed", "finalized")

    def to_dict(self) -> dict[str, Any]:
        """As `-o json` shows it: the fields each status has, no others."""
        head: dict[str, Any] = {"signature": self.signature, "status": self.status}
        if self.status == "pending":
            return head | {
                "last_valid_block_height": self.last_valid_block_height,
                "block_height": self.block_height,
                "nonce_account": self.nonce_account,
                "deadline": self.deadline,
            }
        if self.status == "expired":
            if self.last_valid_block_height is None:
                return head | {"nonce_account": self.nonce_account}
            return head | {"last_valid_block_height": self.last_valid_block_height}
        if self.status == "unknown":
            return head
        if self.status == "failed":
            return head | {"slot": self.slot, "error": self.error}
        return head | {"slot": self.slot, "explorer": self.explorer}


async def transaction_status(rpc: Any, rpc_url: str, journal: Journal, signature: str) -> TransactionStatus:
    """What became of `signature`, by the RPC's word and the journal's: one sent from here that is not
    seen is pending until its lifetime is over (read before its status), then expired. A settled
    signature leaves the journal; a damaged journal is only no help (its hint is to check here)."""
    from yieldcli.chain.rpc.adapter import explorer_url

    usable, entry = True, None
    try:
        entry = journal.find(signature)
    except ConfigError:
        usable = False
    # Before the status: not seen once its blockhash passed (or its nonce moved on), it never lands.
    over, height = (await lifetimes_over(rpc, [entry])) if entry is not None else ({}, None)
    statuses = await rpc.signature_statuses([signature])
    found = statuses[0] if statuses else None
    if found is None and entry is not None and not over[signature]:
        # Sent from here and not seen yet: it can land until its deadline, which the person is told.
        return TransactionStatus(
            signature,
            "pending",
            last_valid_block_height=entry.last_valid_block_height,
            block_height=height,
            nonce_account=entry.nonce_account,
            deadline=entry.deadline(height),
        )
    if found is None:
        if entry is not None and usable and over[signature]:
            journal.remove(signature)
            return TransactionStatus(
                signature,
                "expired",
                last_valid_block_height=entry.last_valid_block_height,
                nonce_account=entry.nonce_account if entry.last_valid_block_height is None else None,
            )
        return TransactionStatus(signature, "unknown")
    if usable:
        journal.remove(signature)
    if found.err is not None:
        return TransactionStatus(signature, "failed", slot=found.slot, error=describe_error(found.err))
    status = found.confirmation_status or "finalized"
    return TransactionStatus(signature, status, slot=found.slot, explorer=explorer_url(signature, rpc_url))
