"""The send path's promises across runs under the chaos RPC: `yield` killed with SIGKILL at each stage (the
send forwarded and its answer not yet back; the wait under way) then the next command, the cluster's
identity changing while a record is open, and answers that are not answers (mislabelled batches,
malformed results), which are the RPC's errors, never the service's. Judged by the chain read directly."""

from __future__ import annotations

import time

import pytest

from tests.chain.transact.chaos_rpc import (
    Fault,
    ForwardThenHttp,
    HeightShift,
    HoldSend,
    Malformed,
    MislabelledBatch,
    OtherGenesis,
)
from tests.chain.transact.conftest import DEPOSIT, TIMEOUT, WINDOW, error_of, kept
from yieldcli.sandbox.chain.knobs import Network

pytestmark = pytest.mark.sandbox(network=Network(slot_ms=0, blockhash_window=WINDOW))


def _until(condition, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the send never came"
        time.sleep(0.02)


def _kill(proc) -> None:
    proc.kill()
    proc.wait(timeout=30)
    proc.communicate()


def test_no_fault_the_proxy_is_transparent(via_proxy, proxy, judge):
    # The harness itself: through the proxy with no fault, a deposit lands once and is shown.
    first = via_proxy(*DEPOSIT, *TIMEOUT)
    assert first.code == 0, first.stderr
    assert judge.succeeded() == [first.json()["signature"]] == list(dict.fromkeys(proxy.forwarded))
    assert kept(judge.home) == set()


def test_kill_9_after_the_send_was_forwarded_then_the_next_command_refuses(start_via_proxy, via_proxy, proxy, judge):
    proxy.fault = ForwardThenHttp("delay", 60)  # forwarded (it lands), the answer never comes back in time
    proc = start_via_proxy(*DEPOSIT, "--confirm-timeout", "60")
    _until(lambda: proxy.forwarded)
    _kill(proc)
    signature = proxy.forwarded[0]
    assert signature in kept(judge.home)  # claimed before the send
    proxy.fault = Fault()
    rerun = via_proxy(*DEPOSIT, *TIMEOUT)
    assert rerun.code == 10 and error_of(rerun)["kind"] == "refused.landed_before", rerun.stderr
    assert signature in rerun.stderr
    assert judge.succeeded() == [signature]


def test_kill_9_while_waiting_then_the_next_command_waits_for_the_earlier_one(start_via_proxy, via_proxy, proxy, judge):
    hold = HoldSend()
    proxy.fault = hold
    proc = start_via_proxy(*DEPOSIT, "--confirm-timeout", "60")
    _until(lambda: proxy.methods.count("getSignatureStatuses") >= 2)  # waiting
    _kill(proc)
    (signature,) = proxy.sent
    rerun = via_proxy(*DEPOSIT, *TIMEOUT)
    assert rerun.code == 8 and error_of(rerun)["kind"] == "tx.pending.earlier", rerun.stderr
    assert error_of(rerun).get("signature") == signature
    hold.release()  # the node lets it through: it lands
    proxy.fault = Fault()
    landed = via_proxy(*DEPOSIT, *TIMEOUT)
    assert landed.code == 10 and error_of(landed)["kind"] == "refused.landed_before", landed.stderr
    assert judge.succeeded() == [signature]
    judge.named_or_kept()


def test_kill_9_while_waiting_then_a_node_ahead_does_not_settle_the_record_as_expired(
    start_via_proxy, via_proxy, proxy, judge, sandbox
):
    sandbox.runtime.set_fault("pending", count=1)  # queued at the node
    proc = start_via_proxy(*DEPOSIT, "--confirm-timeout", "60")
    _until(lambda: sandbox.runtime.pending_signatures)
    _kill(proc)
    (signature,) = sandbox.runtime.pending_signatures
    proxy.fault = HeightShift(WINDOW + 10, after_send=False)  # the next run meets a node ahead
    rerun = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert rerun.code == 8 and error_of(rerun)["kind"].startswith("tx.pending"), rerun.stderr
    assert signature in rerun.stderr and signature in kept(judge.home)
    sandbox.runtime.release_pending()  # its own blockhash was valid all along
    judge.at_most_one()
    assert judge.succeeded() == [signature]


def test_a_genesis_hash_that_changes_while_a_record_is_open_is_a_stop(via_proxy, proxy, judge, sandbox):
    sandbox.runtime.set_fault("pending", count=1)
    first = via_proxy(*DEPOSIT, "--confirm-timeout", "2")
    assert first.code == 8, first.stderr
    (signature,) = set(proxy.forwarded)
    proxy.fault = OtherGenesis()  # the provider switched backends behind the same URL
    second = via_proxy(*DEPOSIT, *TIMEOUT)
    assert second.code == 8, second.stderr
    error = error_of(second)
    assert error["kind"] == "tx.pending.earlier.cluster_changed" and error.get("signature") == signature, error
    assert set(proxy.forwarded) == {signature}  # never a second send
    sandbox.runtime.release_pending()
    judge.at_most_one()


def test_a_batch_answered_with_mislabelled_ids_is_an_rpc_error(via_proxy, proxy, judge):
    proxy.fault = MislabelledBatch()
    first = via_proxy(*DEPOSIT, *TIMEOUT)
    assert proxy.batches >= 1  # the run did ask several questions in one exchange
    assert first.code == 6, first.stderr
    assert error_of(first)["kind"].startswith("network.rpc"), first.stderr
    assert proxy.forwarded == []


@pytest.mark.parametrize("method", ["getGenesisHash", "getLatestBlockhash", "simulateTransaction"])
def test_a_malformed_answer_before_the_send_is_an_rpc_error(via_proxy, proxy, method):
    proxy.fault = Malformed(method, {"unexpected": [1, 2]})
    first = via_proxy(*DEPOSIT, *TIMEOUT)
    assert first.code == 6, first.stderr
    assert error_of(first)["kind"].startswith("network.rpc"), first.stderr
    assert proxy.forwarded == []
