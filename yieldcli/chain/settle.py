"""Settle the journal before a send: what became of every earlier transaction for this wallet and cluster."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from yieldcli.chain.journal import InFlight, Journal
from yieldcli.chain.rpc_types import SignatureStatus


@dataclass
class Settled:
    landed: list[tuple[InFlight, SignatureStatus]] = field(default_factory=list)  # succeeded since they were sent
    failed: list[tuple[InFlight, SignatureStatus]] = field(default_factory=list)  # landed and failed: only a fee spent
    expired: list[InFlight] = field(default_factory=list)  # can never land
    pending: list[InFlight] = field(default_factory=list)  # may still land


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
    height = await rpc.block_height()
    statuses = await rpc.signature_statuses([e.signature for e in entries])
    # An answer shorter than asked must not let an entry slip through unsettled: missing means unknown.
    statuses = list(statuses)[: len(entries)] + [None] * (len(entries) - len(statuses))
    for entry, status in zip(entries, statuses):
        if status is not None:
            (out.landed if status.err is None else out.failed).append((entry, status))
        elif height > entry.last_valid_block_height:
            out.expired.append(entry)
        else:
            out.pending.append(entry)
    known = [e.signature for e, _ in out.failed] + [e.signature for e in out.expired]
    if known:
        journal.remove(*known)
    return out
