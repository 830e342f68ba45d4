"""The strategy program trusted on a cluster: pinned here, never learned from the service.

Mainnet's is the service's published program. Any other cluster takes the `strategy_program`
setting when one is given, and otherwise the sandbox's own program: its address is a name nobody
holds a key for, so no one can deploy a program there on a public cluster, only the sandbox's
chain has it.
"""

from __future__ import annotations

from yieldcli.chain.rpc.cluster_identity import cluster_named
from yieldcli.solana.programs import SANDBOX_STRATEGY_PROGRAM
from yieldcli.tokens import STRATEGY_PROGRAM_ID

PINNED = {"mainnet-beta": STRATEGY_PROGRAM_ID}


def pinned_program(genesis_hash: str, configured: str | None) -> str:
    """The program trusted to move the user's value on the cluster with this genesis hash."""
    cluster = cluster_named(genesis_hash)
    if cluster in PINNED:
        return PINNED[cluster]
    return configured or SANDBOX_STRATEGY_PROGRAM


def setting_problem(genesis_hash: str, configured: str | None) -> str | None:
    """Why a `strategy_program` setting is not used on this cluster, or None."""
    cluster = cluster_named(genesis_hash)
    if configured and cluster in PINNED and PINNED[cluster] != configured:
        return f"strategy_program {configured} is ignored on {cluster}: its program is pinned to {PINNED[cluster]}"
    return None
