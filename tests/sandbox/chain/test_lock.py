"""The sandbox's state folder shared by `yield sandbox serve` and any number of `yield --sandbox` processes."""

from __future__ import annotations

import json
import os
import subprocess

from tests.conftest import YIELD
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET
from yieldcli.tokens import by_symbol

USDC = by_symbol("USDC").mint
DEPOSIT = ("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")


def _signature(result) -> str:
    assert result.code == 0, result.stderr
    body = result.json()
    return body.get("signature") or body["transaction"]["signature"]


def _rpc(url: str, method: str, params: list) -> dict:
    import urllib.request

    request = urllib.request.Request(
        url,
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())["result"]


def test_three_identical_deposits_in_a_row_all_confirm(run):
    signatures = [_signature(run(*DEPOSIT)) for _ in range(3)]
    assert len(set(signatures)) == 3
    for signature in signatures:
        status = run("--sandbox", "tx", "status", signature, "-o", "json")
        assert status.code == 0, status.stderr
        assert "unknown" not in status.stdout, status.stdout


def test_parallel_deposits_beside_a_running_serve_are_all_kept(run, isolated, tmp_path):
    """6 `yield --sandbox deposit --send` at once while `yield sandbox serve` runs on the same state folder.

    Amounts differ so the six transactions differ (identical ones built in the same slot are one
    transaction, as on a real chain). Each process has its own data folder whose `sandbox` is the
    shared state folder, so only the sandbox's state is shared, not the client's in-flight journal.
    """
    shared = isolated / ".local" / "share" / "yield" / "sandbox"
    serve = subprocess.Popen(
        [YIELD, "sandbox", "serve", "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        info = json.loads(serve.stdout.readline())
        before = _served_usdc_position(run, info)
        procs = []
        for i in range(6):
            data = tmp_path / f"data-{i}"
            (data / "yield").mkdir(parents=True)
            (data / "yield" / "sandbox").symlink_to(shared, target_is_directory=True)
            env = {**os.environ, "XDG_DATA_HOME": str(data)}
            args = [
                YIELD,
                "--sandbox",
                "deposit",
                "--asset",
                "USDC",
                "--amount",
                f"1.00000{i}",
                "--send",
                "--yes",
                "-o",
                "json",
            ]
            procs.append(
                subprocess.Popen(
                    args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL
                )
            )
        signatures = []
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0 and "Traceback" not in err, err
            body = json.loads(out)
            signatures.append(body.get("signature") or body["transaction"]["signature"])
        assert len(set(signatures)) == 6
        # Every confirmed deposit is on the chain the server serves, and in the positions it serves.
        statuses = _rpc(info["rpc_url"], "getSignatureStatuses", [signatures])["value"]
        assert all(s is not None and s["err"] is None for s in statuses), statuses
        assert _served_usdc_position(run, info) == before + 6_000_000 + sum(range(6))
    finally:
        serve.terminate()
        serve.wait(timeout=10)
    # And once the server is gone, the embedded sandbox on the same folder knows them all.
    for signature in signatures:
        status = run("--sandbox", "tx", "status", signature, "-o", "json")
        assert status.code == 0 and "unknown" not in status.stdout, status.stdout


def _served_usdc_position(run, info) -> int:
    result = run(
        "--api-url",
        info["url"],
        "positions",
        DEMO_WALLET,
        "--strategy",
        DEMO_STRATEGY_ID,
        "-o",
        "json",
        env={"YIELD_API_KEY": info["api_key"]},
    )
    assert result.code == 0, result.stderr
    return sum(p["total_position_value"] for p in result.json()["data"] if p["token_address"] == USDC)
