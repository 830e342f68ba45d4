"""Which cluster an RPC serves, and refusing to send a transaction to another cluster than its own."""

from __future__ import annotations

from typing import Any

from yieldcli.errors import Refused

# A cluster is known by its genesis hash, whatever URL reaches it.
GENESIS_HASHES = {
    "mainnet-beta": "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
    "devnet": "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG",
    "testnet": "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY",
}


def cluster_named(genesis_hash: str) -> str | None:
    """mainnet-beta, devnet or testnet for their genesis hash; None for any other cluster."""
    return next((name for name, known in GENESIS_HASHES.items() if known == genesis_hash), None)


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
        setattr(error, "expected_cluster", expected)  # for the hint that names it
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
