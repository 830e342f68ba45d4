"""Round trips before the send: `yield` against the sandbox's RPC behind a loopback relay that counts
HTTP exchanges (a batch is one exchange, as it is one round trip to a far RPC)."""

from __future__ import annotations

import pytest

from tests.conftest import TEST_API_KEY, write_keypair
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair
from yieldcli.sandbox.rpc.relay import RpcRelay


@pytest.fixture
def relayed(sandbox, run, tmp_path):
    """`yield` with its RPC URL on a counting relay in front of the sandbox's RPC."""
    keypair = write_keypair(tmp_path / "demo.json", demo_keypair())
    with RpcRelay(sandbox.rpc_url) as relay:
        env = {
            "YIELD_API_URL": sandbox.url,
            "YIELD_API_KEY": TEST_API_KEY,
            "YIELD_RPC_URL": relay.url,
            "YIELD_KEYPAIR": keypair,
            "YIELD_STRATEGY": DEMO_STRATEGY_ID,
        }

        def _yield(*args):
            relay.clear()
            return run(*args, env=env)

        _yield.relay = relay
        yield _yield


@pytest.mark.parametrize(
    "args",
    [("deposit", "--asset", "USDC", "--amount", "1"), ("withdraw", "--asset", "USDC", "--all")],
    ids=["deposit", "withdraw-all"],
)
def test_at_most_three_round_trips_before_the_send(relayed, args):
    if args[0] == "withdraw":
        assert relayed("deposit", "--asset", "USDC", "--amount", "2", "--send", "--yes").code == 0
    result = relayed(*args, "--send", "--yes", "-o", "json")
    assert result.code == 0, result.stderr
    assert result.json()["status"] == "confirmed"
    before = relayed.relay.before("sendTransaction")
    assert relayed.relay.first("sendTransaction") is not None
    assert len(before) <= 3, [e.methods for e in before]
    # The intent check's reads around its simulation travel together: pre-state, simulation, pre-state again.
    check = next(e.methods for e in before if "simulateTransaction" in e.methods)
    at = check.index("simulateTransaction")
    assert check[at - 1] == "getMultipleAccounts" and check[at + 1] == "getMultipleAccounts"
    # The cluster's identity and the blockhash rode along; nothing was asked on its own.
    asked = [m for e in before for m in e.methods]
    assert {"getGenesisHash", "isBlockhashValid", "getLatestBlockhash"} <= set(asked)


def test_the_auto_priority_fee_adds_no_round_trip(relayed):
    result = relayed(
        "deposit", "--asset", "USDC", "--amount", "1", "--priority-fee", "auto", "--send", "--yes", "-o", "json"
    )
    assert result.code == 0, result.stderr
    assert result.json()["status"] == "confirmed" and result.json()["fee"]["compute_unit_limit"] < 1_400_000
    before = relayed.relay.before("sendTransaction")
    # The lookup table; the fee question, the units simulation and the check's pre-read; the check.
    assert len(before) <= 3, [e.methods for e in before]
    fee = next(n for n, e in enumerate(before) if "getRecentPrioritizationFees" in e.methods)
    assert "simulateTransaction" in before[fee].methods and "getMultipleAccounts" in before[fee].methods
    # The check's simulation comes after the pre-read and before the read that shows it held.
    # (The RPC's word on the fee, checked against the count from the message, rides along with it.)
    check = [m for m in before[fee + 1].methods if m != "getFeeForMessage"]
    assert check[0] == "simulateTransaction" and "getMultipleAccounts" in check[1:]
    assert "getFeeForMessage" in before[fee + 1].methods
