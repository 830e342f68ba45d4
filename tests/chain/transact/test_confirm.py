"""The confirmation loop, driven by a scripted RPC and a fake clock, then against the sandbox RPC."""

from __future__ import annotations

import asyncio

import pytest
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.rpc.types import SignatureStatus, TransactionRecord
from yieldcli.chain.transact.confirm import wait_for
from yieldcli.chain.transact.outcomes import Confirmed, Failed, Pending, confirmed, expired, pending
from yieldcli.errors import NetworkError, UsageError
from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.runtime import Runtime

SIG = "5" * 88
LVBH = 1_000


def status(level: str | None, *, err=None, slot: int = 77, confirmations=0):
    return SignatureStatus(slot=slot, confirmations=confirmations, err=err, confirmation_status=level)


class FakeClock:
    def __init__(self):
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class ScriptedRpc:
    """Answers getSignatureStatuses from `statuses` and getBlockHeight from `heights`, one per call;
    the last item repeats. Items that are exceptions are raised."""

    def __init__(self, statuses, heights=(LVBH - 10,), logs=("Program log: boom",)):
        self.statuses = list(statuses)
        self.heights = list(heights)
        self.logs = logs
        self.calls: list[str] = []

    @staticmethod
    def _next(items):
        item = items.pop(0) if len(items) > 1 else items[0]
        if isinstance(item, BaseException):
            raise item
        return item

    async def signature_statuses(self, signatures, *, search_history=True):
        assert search_history
        self.calls.append("statuses")
        return [self._next(self.statuses)]

    async def block_height(self, commitment=None):
        self.calls.append("height")
        return self._next(self.heights)

    async def transaction(self, signature, *, commitment=None):
        self.calls.append("transaction")
        if self.logs is None:
            raise NetworkError("gone")
        return TransactionRecord(77, {"InstructionError": [0, {"Custom": 1}]}, tuple(self.logs), 5000)


def run(rpc, **kwargs):
    clock = FakeClock()
    kwargs.setdefault("timeout_s", 30)
    outcome = asyncio.run(wait_for(rpc, SIG, LVBH, sleep=clock.sleep, clock=clock, **kwargs))
    return outcome, clock


def test_confirmed_after_processed():
    rpc = ScriptedRpc([None, status("processed"), status("confirmed", slot=80)])
    outcome, clock = run(rpc)
    assert outcome == confirmed(SIG, 80, "confirmed")
    assert len(clock.sleeps) == 2


def test_processed_is_enough_when_asked_for():
    outcome, _ = run(ScriptedRpc([status("processed")]), commitment="processed")
    assert isinstance(outcome, Confirmed) and outcome.commitment == "processed"


def test_finalized_waits_past_confirmed():
    rpc = ScriptedRpc([status("confirmed"), status("confirmed"), status("finalized", confirmations=None)])
    outcome, clock = run(rpc, commitment="finalized")
    assert outcome.commitment == "finalized"
    assert len(clock.sleeps) == 2


def test_old_nodes_without_confirmation_status():
    rooted = SignatureStatus(slot=5, confirmations=None, err=None, confirmation_status=None)
    assert isinstance(run(ScriptedRpc([rooted]), commitment="finalized")[0], Confirmed)
    young = SignatureStatus(slot=5, confirmations=3, err=None, confirmation_status=None)
    assert isinstance(run(ScriptedRpc([young]), commitment="confirmed", timeout_s=2)[0], Pending)


def test_failed_with_logs():
    err = {"InstructionError": [0, {"Custom": 1}]}
    outcome, _ = run(ScriptedRpc([None, status("confirmed", err=err)]))
    assert isinstance(outcome, Failed)
    assert outcome.err == err
    assert outcome.logs == ["Program log: boom"]
    assert outcome.reason == "instruction 0 failed: custom program error 0x1 (1)"


def test_failed_even_when_logs_cannot_be_read():
    outcome, _ = run(ScriptedRpc([status("processed", err="InsufficientFundsForRent")], logs=None))
    assert isinstance(outcome, Failed) and outcome.logs == [] and outcome.result["logs"] == []


def test_expired_after_one_more_look():
    rpc = ScriptedRpc([None], heights=[LVBH - 1, LVBH, LVBH + 1])
    outcome, _ = run(rpc)
    assert outcome == expired(SIG, LVBH, LVBH + 1)
    # statuses, height (x3 rounds), then the last look at the statuses
    assert rpc.calls[-3:] == ["statuses", "height", "statuses"]


def test_not_expired_when_the_last_look_finds_it():
    rpc = ScriptedRpc([None, status("confirmed", slot=99)], heights=[LVBH + 1])
    outcome, _ = run(rpc)
    assert outcome == confirmed(SIG, 99, "confirmed")


def test_the_deadline_is_inclusive():
    rpc = ScriptedRpc([None], heights=[LVBH])
    outcome, _ = run(rpc, timeout_s=3)
    assert isinstance(outcome, Pending) and outcome.last_status is None


def test_pending_at_timeout_keeps_the_last_status():
    outcome, clock = run(ScriptedRpc([None, status("processed")]), timeout_s=5, poll_interval=0.5)
    assert outcome == pending(SIG, "processed", None)
    assert clock.now == pytest.approx(5.0)


def test_network_errors_do_not_end_the_wait():
    rpc = ScriptedRpc([NetworkError("cannot connect to RPC http://x"), status("confirmed")])
    assert isinstance(run(rpc)[0], Confirmed)
    outcome, _ = run(ScriptedRpc([NetworkError("cannot connect to RPC http://x")]), timeout_s=2)
    assert outcome == pending(SIG, None, "cannot connect to RPC http://x")


def test_on_status_reports_progress():
    seen = []
    run(ScriptedRpc([None, status("processed"), status("confirmed")]), on_status=seen.append)
    assert seen == [None, "processed"]


def test_bad_commitment_is_a_usage_error():

    with pytest.raises(UsageError):
        run(ScriptedRpc([None]), commitment="rooted")


def test_against_the_sandbox_rpc():
    runtime = Runtime()
    payer, to = Keypair(), Keypair()
    runtime.airdrop(payer.pubkey(), 10**9)
    with RpcServer(runtime) as server:

        async def main():
            async with Rpc(server.url) as rpc:
                latest = await rpc.latest_blockhash()
                ix = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=to.pubkey(), lamports=10**8))
                tx = VersionedTransaction(MessageV0.try_compile(payer.pubkey(), [ix], [], latest.blockhash), [payer])
                signature = await rpc.send(tx)
                outcome = await wait_for(
                    rpc, signature, latest.last_valid_block_height, "finalized", timeout_s=20, poll_interval=0.05
                )
                return signature, outcome, await rpc.balance(to.pubkey())

        signature, outcome, balance = asyncio.run(main())
    assert isinstance(outcome, Confirmed) and outcome.signature == str(signature)
    assert balance == 10**8
