"""Settle the journal before a send: what became of every earlier transaction for this wallet and cluster."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solders.hash import Hash
from solders.pubkey import Pubkey

from yieldcli.chain.rpc.types import SignatureStatus
from yieldcli.chain.transact.journal import InFlight, Journal


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
