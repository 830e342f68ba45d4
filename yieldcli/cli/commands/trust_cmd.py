"""`yield config trust`: the destinations a deposit may move tokens to by a plain transfer (`yieldcli.trust`).

`add` binds a token account to the cluster the RPC serves (its genesis hash), the strategy and the
account's mint, all read when it is added; `list` shows every entry; `remove` drops a destination
everywhere (no RPC needed: taking trust back must always work). Only people run these: no agent tool
(`yield mcp`) can.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Optional

import typer

from yieldcli.addresses import check_pubkey
from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.errors import UsageError
from yieldcli.solana.cluster import cluster_named

if TYPE_CHECKING:
    pass

trust_app = opt.command_group(
    "Destinations a deposit may move your tokens to by a plain transfer (per cluster and strategy)."
)


@trust_app.command("add")
def add(
    ctx: typer.Context,
    destination: str = typer.Argument(..., metavar="DESTINATION", help="The token account that receives."),
    asset: Optional[str] = typer.Option(
        None,
        "--asset",
        help="Its token: a known symbol or a mint address (default: the account's mint on chain; must match it).",
        show_default=False,
    ),
    strategy: opt.Strategy = None,
    url: opt.RpcUrl = None,
) -> None:
    """Trust DESTINATION to receive ASSET by a plain transfer on deposits to the strategy, on the RPC's cluster.

    Only trust an account you know is the strategy's: a deposit may then send your tokens to it.
    Example: yield config trust add 8xYk…Jq2 --asset USDC --strategy 43620ba3-354c-456b-aa3c-5bf7fa46a6d4
    """
    from yieldcli.chain.guard.text import symbol
    from yieldcli.tokens import resolve_asset
    from yieldcli.trust import Trusted, change_trusted, default_trust_path

    session = session_of(ctx)
    check_pubkey(destination, "DESTINATION")
    asked = resolve_asset(asset) if asset is not None else None
    strategy_id = session.strategy(strategy)
    genesis, mint = _read_chain(session.rpc_url(url), session.timeout(), destination)
    if mint is None and asked is None:
        raise UsageError(
            f"{destination} is not an account on this cluster yet: name its token with --asset",
            kind="usage.trust.absent",
        )
    if mint is not None and asked is not None and mint != asked:
        raise UsageError(
            f"{destination} holds {symbol(mint)} ({mint}), not {asset}", hint="check DESTINATION and --asset"
        )
    entry = Trusted(genesis, strategy_id, destination, mint or asked or "", _now())
    path = default_trust_path(session.env)

    def change(entries: list[Trusted]) -> list[Trusted] | None:
        if any(e.same_place(entry) and e.mint == entry.mint for e in entries):
            return None
        return [e for e in entries if not e.same_place(entry)] + [entry]

    change_trusted(path, change)
    session.output().info(
        f"trusted {destination} to receive {symbol(entry.mint)} by a plain transfer on deposits to strategy "
        f"{strategy_id} on {_cluster(genesis)} (in {path})"
    )


@trust_app.command("list")
def list_(ctx: typer.Context, output: opt.Output = None, json_: opt.Json = False) -> None:
    """Every trusted destination, with its token, strategy and cluster.

    Example: yield config trust list -o json | jq '.[] | select(.strategy == "43620ba3-354c-456b-aa3c-5bf7fa46a6d4")'
    """
    from yieldcli.trust import default_trust_path, load_trusted

    session = session_of(ctx)
    out = session.output(output, json_)
    rows = [_row(e.to_dict()) for e in load_trusted(default_trust_path(session.env))]

    def table() -> None:
        from yieldcli.cli.render.layout import Column

        out.columns(
            [
                Column("Destination", [r["destination"] for r in rows]),
                Column("Asset", [r["asset"] for r in rows]),
                Column("Strategy", [r["strategy"] for r in rows], squeeze=12),
                Column("Cluster", [r["cluster_name"] for r in rows], drop=1),
                Column("Added", [r["added"] for r in rows], drop=2),
            ]
        )

    out.records(
        rows,
        fields=("destination", "mint", "asset", "strategy", "cluster", "cluster_name", "added"),
        table=table if rows else lambda: out.info("no trusted destinations"),
    )


@trust_app.command("remove")
def remove(
    ctx: typer.Context,
    destination: str = typer.Argument(..., metavar="DESTINATION", help="The token account to stop trusting."),
) -> None:
    """Stop trusting DESTINATION, for every strategy and cluster.

    Example: yield config trust remove 8xYk…Jq2
    """
    from yieldcli.trust import Trusted, change_trusted, default_trust_path

    session = session_of(ctx)
    check_pubkey(destination, "DESTINATION")
    path = default_trust_path(session.env)
    removed: list[Trusted] = []

    def change(entries: list[Trusted]) -> list[Trusted] | None:
        removed.extend(e for e in entries if e.destination == destination)
        return [e for e in entries if e.destination != destination] if removed else None

    change_trusted(path, change)
    if removed:
        entries = f"{len(removed)} entr{'ies' if len(removed) > 1 else 'y'}"
        session.output().info(f"{destination} is no longer trusted ({entries} removed from {path})")
    else:
        session.output().info(f"{destination} was not trusted")


def _read_chain(rpc_url: str, timeout: float, destination: str) -> tuple[str, str | None]:
    """The cluster's genesis hash and the destination's mint (None: no account there yet)."""
    import asyncio

    from solders.pubkey import Pubkey

    from yieldcli.chain.rpc.adapter import Rpc
    from yieldcli.chain.tx.state import state_of

    async def ask() -> tuple[str, Any]:
        async with Rpc(rpc_url, timeout=timeout) as rpc:
            return await rpc.genesis_hash(), await rpc.account_info(Pubkey.from_string(destination))

    genesis, info = asyncio.run(ask())
    state = state_of(info)
    if state is None:
        return genesis, None
    if state.token is None:
        raise UsageError(
            f"{destination} is not a token account: trust names the token account that receives",
            kind="usage.trust.not_token_account",
        )
    return genesis, state.token.mint


def _row(entry: dict[str, str]) -> dict[str, str]:
    from yieldcli.chain.guard.text import symbol

    return {**entry, "asset": symbol(entry["mint"]), "cluster_name": _cluster(entry["cluster"])}


def _cluster(genesis: str) -> str:
    return cluster_named(genesis) or f"cluster {genesis[:8]}…"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
