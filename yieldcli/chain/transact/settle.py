"""Settle the journal: before a send, what became of every earlier transaction for this wallet and
cluster; asked about one signature, what became of it (`transaction_status`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from yieldcli.chain.transact.journal import InFlight, Journal, rpc_key
from yieldcli.chain.transact.outcomes import Confirmed, Expired, Failed, confirmed, with_signature
from yieldcli.chain.transact.proof import Lifetime, RpcDisagrees, Witness
from yieldcli.errors import ConfigError, TransactionPending
from yieldcli.solana.cluster import cluster_named


@dataclass
class Settled:
    landed: list[tuple[InFlight, Confirmed]] = field(default_factory=list)  # proven to have succeeded
    failed: list[tuple[InFlight, Failed]] = field(default_factory=list)  # proven to have failed: only a fee spent
    expired: list[InFlight] = field(default_factory=list)  # proven never to land
    pending: list[InFlight] = field(default_factory=list)  # may still land, or not proven either way
    block_height: int | None = None  # the highest height read; None when none was needed


async def settle(journal: Journal, rpc: Any, cluster: str, wallet: str, rpc_url: str | None = None) -> Settled:
    """What became of every journal entry for `wallet` on `cluster`, each proven (`proof.py`); drop the
    failed and the expired.

    Those not proven stay in the journal, and so do those that landed: they are dropped only once
    the user has been told and chose to send again, so a blind retry is refused every time. An entry
    sent through `rpc_url` while it said another cluster is a stop (`ClusterChanged`): a provider that
    switched backends must not hide a transaction that may land.
    """
    out = Settled()
    mine = journal.entries(wallet=wallet)
    if rpc_url is not None:
        key = rpc_key(rpc_url)
        moved = [e for e in mine if e.cluster != cluster and e.rpc == key]
        if moved:
            raise cluster_changed(moved[0], cluster)
    # A record under a cluster no public one is (a local validator, or a genesis hash an RPC made up) may
    # be of this very chain: landed here, it is this chain's; not proven so, it is a stop, never forgotten.
    for entry in (e for e in mine if e.cluster != cluster and cluster_named(e.cluster) is None):
        slot = entry.landed_slot if entry.landed_slot is not None else await _landed_here(rpc, entry)
        if slot is None:
            raise cluster_changed(entry, cluster)
        journal.mark_landed(entry.signature, slot)
        out.landed.append((entry, confirmed(entry.signature, slot, "confirmed")))
    open_here = [e for e in mine if e.cluster == cluster]
    if open_here:
        # The cluster named above may be remembered: the chain asked must be the records' own, asked now.
        now = await rpc.genesis_hash_now()
        if now != cluster:
            raise cluster_changed(open_here[0], now)
    for entry in open_here:
        if entry.landed_slot is not None:  # proven before: a landing is never undone
            out.landed.append((entry, confirmed(entry.signature, entry.landed_slot, "confirmed")))
            continue
        witness = Witness(rpc, entry.signature, "confirmed")
        try:
            proven = await prove(witness, Lifetime.of_entry(entry))
        except RpcDisagrees:
            proven = None
        if isinstance(proven, Confirmed):
            journal.mark_landed(entry.signature, proven.slot)
        if witness.height is not None:
            out.block_height = max(out.block_height or 0, witness.height)
        if isinstance(proven, Confirmed):
            out.landed.append((entry, proven))
        elif isinstance(proven, Failed):
            out.failed.append((entry, proven))
        elif isinstance(proven, Expired):
            out.expired.append(entry)
        else:
            out.pending.append(entry)
    known = [e.signature for e, _ in out.failed] + [e.signature for e in out.expired]
    if known:
        journal.remove(*known)
    return out


async def _landed_here(rpc: Any, entry: InFlight) -> int | None:
    """The slot `entry` is proven to have landed in on the RPC's chain, else None."""
    witness = Witness(rpc, entry.signature, "confirmed")
    try:
        status = await witness.status()
        proven = await witness.landed(status) if status is not None and status.reached("confirmed") else None
    except RpcDisagrees:
        return None
    return proven.slot if isinstance(proven, Confirmed) else None


async def prove(witness: Witness, lifetime: Lifetime) -> Confirmed | Failed | Expired | None:
    """Its fate when proven (landed, failed at the witness's commitment, or never to land), else None."""
    status = await witness.status()
    if status is None:
        return await witness.never_landed(lifetime)
    return await witness.landed(status) if status.reached(witness.commitment) else None


def cluster_changed(entry: InFlight, genesis: str, *, sending: bool = True) -> TransactionPending:
    """An open record's chain is not the one the RPC serves now (the same URL, switched backends)."""
    was = cluster_named(entry.cluster) or f"genesis hash {entry.cluster}"
    now = cluster_named(genesis) or f"genesis hash {genesis}"
    then = "; not sending another until its fate is known" if sending else ""
    error = TransactionPending(
        f"your {entry.action} {entry.signature} was sent on {was}; the RPC now serves {now}, whose word "
        f"proves nothing of it{then}",
        kind="tx.pending.earlier.cluster_changed",
    )
    setattr(error, "cluster_was", was)  # noqa: B010 (for the hint that says where to check it)
    return with_signature(error, entry.signature)


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
    """What became of `signature`, proven (`proof.py`): one sent from here that is not proven either
    way is pending, with until when it can land; unknown when nothing here says when it was sent. A
    settled signature leaves the journal; a damaged journal is only no help (its hint is to check here)."""
    from yieldcli.chain.rpc.adapter import explorer_url

    usable, entry = True, None
    try:
        entry = journal.find(signature)
    except ConfigError:
        usable = False
    if entry is not None:
        now = await rpc.genesis_hash_now()
        if now != entry.cluster:  # sent on another chain than this RPC serves: nothing it says proves anything
            raise cluster_changed(entry, now, sending=False)
    if entry is not None and entry.landed_slot is not None:  # proven before: a landing is never undone
        if usable:
            journal.remove(signature)
        explorer = explorer_url(signature, rpc_url)
        return TransactionStatus(signature, "confirmed", slot=entry.landed_slot, explorer=explorer)
    witness = Witness(rpc, signature, "processed")
    status = await witness.status()
    if status is None:
        gone = await witness.never_landed(Lifetime.of_entry(entry)) if entry is not None else None
        if gone is None:
            if entry is None:
                return TransactionStatus(signature, "unknown")
            # Sent from here and not proven gone: it can land until its deadline, which the person is told.
            return TransactionStatus(
                signature,
                "pending",
                last_valid_block_height=entry.last_valid_block_height,
                block_height=witness.height,
                nonce_account=entry.nonce_account,
                deadline=entry.deadline(witness.height),
            )
        if usable:
            journal.remove(signature)
        return TransactionStatus(
            signature,
            "expired",
            last_valid_block_height=entry.last_valid_block_height if entry is not None else None,
            nonce_account=entry.nonce_account if entry is not None and entry.last_valid_block_height is None else None,
        )
    landed = await witness.landed(status)  # the transaction itself, at confirmed, backs the status
    if landed is None:
        # Processed only, or the node does not give the transaction yet: what its status says, kept.
        return TransactionStatus(signature, status.confirmation_status or "processed", slot=status.slot)
    if usable and entry is not None:
        journal.remove(signature)
    if isinstance(landed, Failed):
        return TransactionStatus(signature, "failed", slot=landed.slot, error=landed.reason)
    commitment = status.confirmation_status or "finalized"
    return TransactionStatus(signature, commitment, slot=landed.slot, explorer=explorer_url(signature, rpc_url))
