"""Which cluster an RPC serves, and refusing to send a transaction to another cluster than its own."""

from __future__ import annotations

from typing import Any

from yieldcli.errors import Refused
from yieldcli.solana.cluster import GENESIS_HASHES, cluster_named

__all__ = ["GENESIS_HASHES", "check_same_cluster", "cluster_named"]


async def check_same_cluster(rpc: Any, tx: Any, expected: str | None, *, blockhash: bool = True) -> str:
    """Refuse (before signing) a transaction the RPC's cluster cannot take; return the cluster's genesis hash.

    `expected` names the cluster the transaction was built for (None when unknown). Either way a
    blockhash the RPC does not know means the transaction cannot land there (`blockhash=False`
    skips that look, for a second check just before sending).
    """
    genesis: str = await rpc.genesis_hash()
    if expected is not None and GENESIS_HASHES[expected] != genesis:
        actual = cluster_named(genesis) or f"another cluster (genesis hash {genesis})"
        error = Refused(
            f"the RPC at {rpc.shown_url} is {actual}; this transaction is for {expected}; nothing was sent",
            kind="refused.cluster",
        )
        error.expected_cluster = expected  # for the hint that names it
        raise error
    if not blockhash:
        return genesis
    recent = tx.message.recent_blockhash
    # processed: the most recent view, so a blockhash fresh from the service is already known.
    if not await rpc.is_blockhash_valid(recent, "processed"):
        await rpc.health()  # a node that is unhealthy or behind raises here: that is not a wrong cluster
        raise Refused(
            f"the RPC at {rpc.shown_url} does not know this transaction's blockhash {recent}: the RPC is on "
            "another cluster than the transaction, or the blockhash has expired; nothing was sent",
            kind="refused.cluster.blockhash",
        )
    return genesis
