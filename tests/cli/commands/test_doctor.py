"""`yield doctor` and `yield auth status --check` against real servers on loopback."""

import json
import os

import pytest

from tests.chain.rpc.test_adapter import SECRET, Stub
from tests.conftest import TEST_API_KEY

MAINNET_GENESIS = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
TESTNET_GENESIS = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"


@pytest.fixture
def genesis_rpc():
    """JSON-RPC servers on loopback answering with the genesis hash they are given (their URLs carry
    a credential, which doctor must not print)."""
    stubs = []

    def start(genesis: str) -> str:
        stub = Stub()
        stub.reply = (200, json.dumps({"jsonrpc": "2.0", "result": genesis, "id": "ID"}).encode(), 0.0)
        stubs.append(stub)
        return stub.url

    yield start
    for stub in stubs:
        stub.close()


def checks(result) -> dict[str, dict]:
    return {c["name"]: c for c in result.json()["checks"]}


def test_doctor_passes_in_the_sandbox(run):
    result = run("--sandbox", "doctor", "-o", "json")
    assert result.code == 0, result.stderr
    found = checks(result)
    assert result.json()["ok"] is True
    assert {c["status"] for c in found.values()} == {"ok"}, found
    assert set(found) == {
        "config file",
        "config values",
        "API key",
        "key accepted",
        "service",
        "RPC",
        "RPC cluster",
        "keypair",
        "Solana CLI config",
        "strategy program",
        "trusted destinations",
    }
    assert (
        found["strategy program"]["detail"]
        == "SandboxStrategy1111111111111111111111111111 (pinned for this cluster), deployed"
    )


def test_doctor_checks_the_strategy_program_setting(run):
    # A program that is not deployed on the cluster: every deposit would be refused, so doctor fails.
    result = run(
        "--sandbox",
        "doctor",
        "-o",
        "json",
        env={"YIELD_STRATEGY_PROGRAM": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"},
    )
    found = checks(result)
    assert result.code == 3 and found["strategy program"]["status"] == "fail", result.stdout
    assert "from env" in found["strategy program"]["detail"]
    shown = run(
        "--sandbox",
        "config",
        "show",
        "-o",
        "json",
        env={"YIELD_STRATEGY_PROGRAM": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"},
    )
    assert "strategy_program" in shown.stdout and "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" in shown.stdout


def test_doctor_reports_an_rpc_on_another_cluster(run, genesis_rpc):
    """The sandbox service builds for its own cluster; an RPC answering mainnet's genesis is another."""
    result = run("--sandbox", "doctor", "-u", genesis_rpc(MAINNET_GENESIS), "-o", "json")
    assert result.code == 3
    cluster = checks(result)["RPC cluster"]
    assert cluster["status"] == "fail" and cluster["detail"].startswith("mainnet-beta, but the service builds for")
    assert "-u/--url" in cluster["hint"]
    assert result.stderr.startswith("error: 1 check failed (first: RPC cluster: mainnet-beta")
    assert SECRET not in result.stdout + result.stderr

    table = run("--sandbox", "doctor", "-u", genesis_rpc(TESTNET_GENESIS), "-o", "table")
    assert table.code == 3
    line = next(line for line in table.stdout.splitlines() if "RPC cluster" in line)
    assert line.startswith("fail") and "testnet, but the service builds for" in line


def test_doctor_warns_that_a_local_service_cluster_cannot_be_told(api, genesis_rpc):
    result = api("doctor", "-u", genesis_rpc(TESTNET_GENESIS), "-o", "json")
    found = checks(result)
    assert found["RPC cluster"]["status"] == "warn" and found["RPC cluster"]["detail"].startswith("testnet")
    assert found["key accepted"]["status"] == "ok" and found["service"]["status"] == "ok"
    # no keypair and no Solana CLI config: warnings, not failures
    assert found["keypair"]["status"] == "warn" and found["Solana CLI config"]["status"] == "warn"
    assert result.code == 0, result.stderr


def test_doctor_fails_on_a_refused_key_and_an_unreachable_rpc(api, genesis_rpc, tmp_path):
    keypair = tmp_path / "id.json"
    keypair.write_text(json.dumps(list(range(64))))
    os.chmod(keypair, 0o644)
    dead = "http://127.0.0.1:9"  # the discard port: nothing listens there on loopback
    result = api("doctor", "-u", dead, "-k", str(keypair), "-o", "json", env={"YIELD_API_KEY": "wrong-key"})
    found = checks(result)
    assert found["key accepted"]["status"] == "fail"
    assert found["RPC"]["status"] == "fail"
    assert found["keypair"]["status"] == "warn" and "chmod 600" in found["keypair"]["hint"]
    assert result.code == 4  # the first failure is the key
    assert "wrong-key" not in result.stdout + result.stderr


def test_doctor_fails_without_a_key_source(run, sandbox, genesis_rpc):
    result = run("doctor", "-u", genesis_rpc(MAINNET_GENESIS), "-o", "json", env={"YIELD_API_URL": sandbox.url})
    assert result.code == 3
    assert checks(result)["API key"]["status"] == "fail"
    assert "yield auth login" in checks(result)["API key"]["hint"]


def test_auth_status_check_asks_the_service(api):
    good = api("auth", "status", "--check", "-o", "json")
    assert good.code == 0 and good.json()["accepted"] is True
    bad = api("auth", "status", "--check", "-o", "json", env={"YIELD_API_KEY": "not-the-key"})
    assert bad.code == 4 and bad.json()["accepted"] is False
    assert "refused the key" in bad.stderr and "not-the-key" not in bad.stdout + bad.stderr
    plain = api("auth", "status")
    assert plain.code == 0 and "accepted" not in plain.stdout  # without --check, no request
    assert TEST_API_KEY not in good.stdout + bad.stdout + plain.stdout
