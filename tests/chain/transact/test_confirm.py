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
from yieldcli.chain.transact.proof import Lifetime, RpcDisagrees
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
    """Answers getSignatureStatuses from `statuses` and the block height from `heights`, one per call;
    the last item repeats. Items that are exceptions are raised. Its blockhash is valid while the height
    is within LVBH (or as `valid` says); getTransaction gives the last status's transaction (its error,
    its slot) unless `records` scripts it."""

    def __init__(
        self,
        statuses,
        heights=(LVBH - 10,),
        logs=("Program log: boom",),
        valid=None,
        records=None,
        named=(),
        history_from=0,
    ):
        self.named = named
        self.history_from = history_from
        self.statuses = list(statuses)
        self.heights = list(heights)
        self.logs = logs
        self.valid = None if valid is None else list(valid)
        self.records = None if records is None else list(records)
        self.calls: list[str] = []
        self.last_status = None
        self.last_height = 0

    @staticmethod
    def _next(items):
        item = items.pop(0) if len(items) > 1 else items[0]
        if isinstance(item, BaseException):
            raise item
        return item

    async def signature_statuses_at(self, signatures, *, search_history=True):
        assert search_history
        self.calls.append("statuses")
        self.last_status = self._next(self.statuses)
        return [self.last_status], 10**9  # answered from a node at the tip

    async def recent_signatures_of(self, address, *, commitment=None, min_context_slot=None):
        self.calls.append("signatures")
        return set(self.named)

    async def first_available_block(self):
        self.calls.append("history")
        return self.history_from

    async def height_and_slot(self, commitment=None, *, min_context_slot=None):
        self.calls.append("height")
        self.last_height = self._next(self.heights)
        return self.last_height, 2 * self.last_height

    async def blockhash_validity(self, blockhash, commitment=None, *, min_context_slot=None):
        self.calls.append("valid")
        valid = self._next(self.valid) if self.valid is not None else self.last_height <= LVBH
        return valid, 2 * self.last_height

    async def transaction(self, signature, *, commitment=None):
        self.calls.append("transaction")
        if self.logs is None:
            raise NetworkError("gone")
        if self.records is not None:
            return self._next(self.records)
        if self.last_status is None:
            return None
        return TransactionRecord(self.last_status.slot, self.last_status.err, tuple(self.logs), 5000)


def run(rpc, **kwargs):
    clock = FakeClock()
    kwargs.setdefault("timeout_s", 30)
    lifetime = Lifetime("11111111111111111111111111111111", LVBH, signer="W")
    outcome = asyncio.run(wait_for(rpc, SIG, lifetime, sleep=clock.sleep, clock=clock, **kwargs))
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


def test_a_failure_is_proven_at_the_commitment_asked():
    err = "InsufficientFundsForRent"
    outcome, _ = run(ScriptedRpc([status("processed", err=err), status("confirmed", err=err)]))
    assert isinstance(outcome, Failed) and outcome.reason


def test_a_failure_whose_transaction_cannot_be_read_is_not_proven():
    outcome, _ = run(ScriptedRpc([status("confirmed", err="InsufficientFundsForRent")], logs=None), timeout_s=2)
    assert isinstance(outcome, Pending) and outcome.last_error == "gone"


def test_expired_only_when_its_own_blockhash_is_invalid_and_then_unseen():
    rpc = ScriptedRpc([None], heights=[LVBH - 1, LVBH, LVBH + 1])
    outcome, _ = run(rpc)
    assert outcome == expired(SIG, LVBH, LVBH + 1)
    # the height past the deadline, then its own blockhash, then the signature and the transaction
    assert rpc.calls[-7:] == ["statuses", "height", "valid", "statuses", "transaction", "history", "signatures"]


def test_a_node_whose_history_starts_after_the_blockhash_proves_nothing():
    # A node restarted from a snapshot: status, transaction and signatures all unknown, because its
    # history begins after the transaction could have landed. Not proof: pending at the timeout.
    rpc = ScriptedRpc([None], heights=[LVBH + 1], history_from=2 * (LVBH + 1))
    outcome, _ = run(rpc, timeout_s=2)
    assert isinstance(outcome, Pending) and "history starts at slot" in outcome.last_error


def test_a_landing_the_signer_s_signatures_list_is_never_expired():
    # Status and transaction both unknown (a node missing that history), but the signatures naming the
    # signer list it: it landed, so the RPC disagrees with itself, never "nothing was spent".
    rpc = ScriptedRpc([None], heights=[LVBH + 1], named=[SIG])
    with pytest.raises(RpcDisagrees, match="lists it among the signatures of W"):
        run(rpc)


def test_a_deadline_from_another_blockhash_does_not_expire_it():
    # A cached getLatestBlockhash gave a deadline behind its own: the height passes it, its own
    # blockhash is still valid, so it may land: pending at the timeout, never "nothing was spent".
    rpc = ScriptedRpc([None], heights=[LVBH + 5], valid=[True])
    outcome, _ = run(rpc, timeout_s=3)
    assert isinstance(outcome, Pending)


def test_a_height_that_goes_backwards_is_the_rpc_disagreeing():
    rpc = ScriptedRpc([None], heights=[LVBH - 1, LVBH - 5])
    with pytest.raises(RpcDisagrees, match="went back"):
        run(rpc)


def test_on_a_public_cluster_a_height_that_runs_ahead_of_the_clock_is_the_rpc_disagreeing():
    # 40 blocks in 1 s (the fake clock sleeps 0.5 s a round): no public cluster makes blocks that fast.
    rpc = ScriptedRpc([None], heights=[LVBH - 20, LVBH - 19, LVBH + 20], valid=[False])
    with pytest.raises(RpcDisagrees, match="faster than the cluster makes blocks"):
        run(rpc, paced=True)
    # the same answers from a local cluster (slots as fast as its operator makes them) prove it expired
    rpc = ScriptedRpc([None], heights=[LVBH - 20, LVBH - 19, LVBH + 20], valid=[False])
    assert run(rpc)[0] == expired(SIG, LVBH, LVBH + 20)


def test_a_status_the_transaction_contradicts_is_the_rpc_disagreeing():
    failure = TransactionRecord(77, {"InstructionError": [0, {"Custom": 1}]}, (), 5000)
    with pytest.raises(RpcDisagrees, match="succeeded in slot 77, the transaction itself failed"):
        run(ScriptedRpc([status("confirmed")], records=[failure]))
    with pytest.raises(RpcDisagrees):
        run(ScriptedRpc([status("confirmed")], records=[TransactionRecord(78, None, (), 5000)]))


def test_a_status_without_its_transaction_is_no_success():
    rpc = ScriptedRpc([status("confirmed")], records=[None])
    with pytest.raises(RpcDisagrees, match="does not give the transaction itself"):
        run(rpc, timeout_s=2)  # to the timeout: no lag, a contradiction
    # a moment's lag is no contradiction: the transaction comes, and that is the proof
    rpc = ScriptedRpc([status("confirmed", slot=77)], records=[None, TransactionRecord(77, None, (), 5000)])
    assert isinstance(run(rpc, timeout_s=5)[0], Confirmed)
    # once its lifetime is over, the status it keeps giving is a contradiction
    rpc = ScriptedRpc([status("confirmed")], records=[None], heights=[LVBH + 1])
    with pytest.raises(RpcDisagrees, match="lifetime is over"):
        run(rpc)


def test_unknown_status_with_a_transaction_given_is_the_rpc_disagreeing():
    record = TransactionRecord(90, None, (), 5000)
    with pytest.raises(RpcDisagrees, match="gives the transaction"):
        run(ScriptedRpc([None], heights=[LVBH + 1], records=[record]))


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
                lifetime = Lifetime(str(latest.blockhash), latest.last_valid_block_height)
                outcome = await wait_for(rpc, signature, lifetime, "finalized", timeout_s=20, poll_interval=0.05)
                return signature, outcome, await rpc.balance(to.pubkey())

        signature, outcome, balance = asyncio.run(main())
    assert isinstance(outcome, Confirmed) and outcome.signature == str(signature)
    assert balance == 10**8
