"""Writes against a far RPC, and CPU per streamed item: figures for bench/run.py.

The sandbox's RPC sits behind a loopback relay adding DELAY to every HTTP exchange (a batch is one
exchange). For `deposit --send` and `withdraw --all --send`: round trips before the send, time from
start to the send, and from start to the process's end (confirmed, then the refreshed position),
against the floor: the time of the first RPC exchange (start-up, the service's answer and local
work) plus one round trip.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

DELAY = 0.100


def write_figures(
    work: Path, env: dict[str, str], yield_cmd: str, runs: int
) -> list[tuple[str, float, float, float, int]]:
    """(name, floor ms, to-send ms, to-end ms, round trips before the send), medians over `runs`."""
    from yieldcli.sandbox.demo import demo_keypair
    from yieldcli.sandbox.rpc.relay import RpcRelay
    from yieldcli.sandbox.server import SandboxServer

    server = SandboxServer(work / "far" / "state.json", api_key=env["YIELD_API_KEY"]).start()
    keypair = work / "far-demo.json"
    keypair.write_text(json.dumps(list(bytes(demo_keypair()))))
    keypair.chmod(0o600)
    out = []
    try:
        with RpcRelay(server.rpc_url, delay=DELAY) as relay:
            env2 = {**env, "YIELD_API_URL": server.url, "YIELD_RPC_URL": relay.url, "YIELD_KEYPAIR": str(keypair)}
            for name, args in (
                ("deposit --send", ["deposit", "--asset", "USDC", "--amount", "1"]),
                ("withdraw --all --send", ["withdraw", "--asset", "USDC", "--all"]),
            ):
                samples = []
                for _ in range(runs):
                    if name.startswith("withdraw"):
                        subprocess.run(
                            [yield_cmd, "deposit", "--asset", "USDC", "--amount", "2", "--send", "--yes"],
                            env=env2,
                            capture_output=True,
                            check=True,
                        )
                    relay.clear()
                    started = time.monotonic()
                    subprocess.run([yield_cmd, *args, "--send", "--yes"], env=env2, capture_output=True, check=True)
                    ended = time.monotonic()
                    send = relay.first("sendTransaction")
                    first = relay.exchanges[0]
                    assert send is not None
                    samples.append(
                        (
                            (first.started - started) * 1000 + DELAY * 1000,
                            (send.started - started) * 1000,
                            (ended - started) * 1000,
                            len(relay.before("sendTransaction")),
                        )
                    )
                med = [sorted(s[i] for s in samples)[len(samples) // 2] for i in range(4)]
                out.append((name, med[0], med[1], med[2], int(med[3])))
    finally:
        server.stop()
    return out


def cpu_per_item(
    env: dict[str, str],
    yield_cmd: str,
    wallet: str,
    small_url: str,
    large_url: str,
    small_items: int,
    large_items: int,
    runs: int,
) -> float:
    """µs of CPU (user + system) per item of `positions --all -o ndjson`, start-up taken out."""

    def cpu(url: str) -> float:
        best = float("inf")
        for _ in range(runs):
            proc = subprocess.Popen(
                [yield_cmd, "positions", wallet, "--all", "--limit", "100", "-o", "ndjson"],
                env={**env, "YIELD_API_URL": url},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            _, _, usage = os.wait4(proc.pid, 0)
            best = min(best, usage.ru_utime + usage.ru_stime)
        return best

    return (cpu(large_url) - cpu(small_url)) * 1e6 / (large_items - small_items)
