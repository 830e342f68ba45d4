"""The checks of a setup's chain side: the RPC answers, its cluster (told by its genesis hash) is the
one the service builds for, the strategy program the intent check trusts is deployed there, and the
destinations trusted on that cluster.

A devnet RPC beside a mainnet service makes every review's simulation meaningless, so a cluster
that differs is a failure, not a warning.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from yieldcli.chain.guard.text import short, symbol
from yieldcli.cli.checks.check import Check, ms_since
from yieldcli.errors import ConfigError, ExitCode, YieldError
from yieldcli.solana.cluster import GENESIS_HASHES, SERVICE_CLUSTER, cluster_named
from yieldcli.trust import default_trust_path, load_trusted
from yieldcli.urls import is_loopback, redact_url

if TYPE_CHECKING:
    from yieldcli.cli.session import Session


def _genesis(url: str, timeout: float) -> tuple[str, str]:
    """The RPC's genesis hash, and how long it took to answer (not counting loading the client)."""
    import asyncio

    from yieldcli.chain.rpc.adapter import Rpc

    async def ask() -> tuple[str, str]:
        async with Rpc(url, timeout=timeout) as rpc:
            started = time.monotonic()
            return str(await rpc.call("getGenesisHash")), ms_since(started)

    return asyncio.run(ask())


def _expected_cluster(session: Session) -> tuple[str | None, str]:
    """The service's cluster, as a genesis hash (None when it cannot be told), and its name."""
    if session.options.sandbox:
        return _genesis(session.sandbox().rpc_url, session.timeout())[0], "the sandbox's cluster"
    host = urlsplit(str(session.settings.value("api_url"))).hostname

    if is_loopback(host):
        return None, "a local service"

    return GENESIS_HASHES[SERVICE_CLUSTER], SERVICE_CLUSTER


def rpc(session: Session, url_flag: str | None) -> list[Check]:
    try:
        url = session.rpc_url(url_flag)
    except YieldError as exc:
        return [Check("RPC", "fail", exc.message, exc.hint or "", ExitCode.CONFIG)]
    shown = redact_url(url)
    try:
        genesis, took = _genesis(url, session.timeout())
    except YieldError as exc:
        return [
            Check(
                "RPC",
                "fail",
                f"{shown}: {exc.message}",
                exc.hint or "check -u/--url, rpc_url or the Solana CLI config",
                ExitCode.NETWORK,
            )
        ]
    checks = [Check("RPC", "ok", f"{shown} answers in {took}")]

    cluster = cluster_named(genesis) or f"unknown cluster (genesis {genesis})"
    try:
        expected, expected_name = _expected_cluster(session)
    except YieldError as exc:
        return checks + [Check("RPC cluster", "warn", f"{cluster}; the service's cluster is unknown: {exc.message}")]
    if expected is None:
        checks.append(
            Check(
                "RPC cluster",
                "warn",
                f"{cluster}; cannot tell which cluster {expected_name} builds for",
                "make sure the RPC is the cluster the service builds for",
            )
        )
    elif genesis != expected:
        checks.append(
            Check(
                "RPC cluster",
                "fail",
                f"{cluster}, but the service builds for {expected_name}",
                "point -u/--url (or rpc_url, or the Solana CLI's json_rpc_url) at the service's cluster",
                ExitCode.CONFIG,
            )
        )
    else:
        checks.append(Check("RPC cluster", "ok", f"{cluster}: {expected_name}, as the service's"))
    if checks[-1].status != "fail":  # on the wrong cluster, its program says nothing more
        checks.append(strategy_program(session, url, genesis))
        checks.append(trusted_destinations(session, genesis))
    return checks


def strategy_program(session: Session, url: str, genesis: str) -> Check:
    """The program the intent guard trusts on this cluster: pinned, and deployed there."""
    import asyncio

    from yieldcli.chain.guard.pinned import pinned_program, setting_problem
    from yieldcli.chain.rpc.adapter import Rpc

    setting = session.settings.get("strategy_program")
    configured = str(setting.value) if setting.value else None
    program = pinned_program(genesis, configured)
    problem = setting_problem(genesis, configured)
    if problem:
        return Check("strategy program", "warn", problem, "yield config unset strategy_program")

    async def ask() -> Any:
        async with Rpc(url, timeout=session.timeout()) as client:
            return await client.call("getAccountInfo", [program, {"encoding": "base64"}])

    try:
        answer = asyncio.run(ask())
        found = answer.get("value") if isinstance(answer, dict) else None
    except YieldError as exc:
        return Check("strategy program", "warn", f"{program}: could not be read: {exc.message}")
    source = f"from {setting.source}" if configured else "pinned for this cluster"
    if not found or not found.get("executable"):
        # Named by a setting (or mainnet's pin) it must be there; the sandbox's default only on the sandbox.
        must_be_there = configured or genesis == GENESIS_HASHES[SERVICE_CLUSTER]
        return Check(
            "strategy program",
            "fail" if must_be_there else "warn",
            f"{program} ({source}) is not a program on this cluster: deposits and withdrawals will be refused",
            "set strategy_program to the strategy's program on this cluster",
            ExitCode.CONFIG,
        )
    return Check("strategy program", "ok", f"{program} ({source}), deployed")


def trusted_destinations(session: Session, genesis: str) -> Check:
    """The destinations trusted for this cluster and the strategy configured."""
    try:
        entries = [e for e in load_trusted(default_trust_path(session.env)) if e.cluster == genesis]
    except ConfigError as exc:
        return Check("trusted destinations", "fail", exc.message, "fix or remove the file", ExitCode.CONFIG)
    try:
        strategy = session.strategy(None)
    except YieldError:
        strategy = None
    mine = [e for e in entries if e.strategy == strategy]
    if not mine:
        where = f"strategy {strategy}" if strategy else "any strategy (none configured)"
        return Check(
            "trusted destinations",
            "ok",
            f"none for {where} on this cluster: deposits move value only through the strategy program",
        )
    listed = ", ".join(f"{short(e.destination)} ({symbol(e.mint)})" for e in mine)
    return Check(
        "trusted destinations",
        "ok",
        f"{len(mine)} for strategy {strategy} on this cluster: {listed}",
        "`yield config trust list` shows them; `yield config trust remove DESTINATION` stops trusting one",
    )
