"""The send path's promises against an RPC that lags, caches, lies or cuts (the chaos RPC of chaos_rpc.py),
one fault per write, judged by the sandbox's chain read directly: at most one landing per intent, exit 0
only when landed, every forwarded signature named or kept, the documented exit code, no traceback, a
bound on wall time. After each fault the same command runs again, as a user retrying would."""

from __future__ import annotations

import pytest

from tests.chain.transact.chaos_rpc import (
    Both,
    DropSend,
    Fault,
    ForwardThenBlockhashNotFound,
    ForwardThenHttp,
    HeightShift,
    StaleLatestBlockhash,
    StatusesSay,
    TransactionSays,
    When,
)
from tests.chain.transact.conftest import DEPOSIT, TIMEOUT, WINDOW, blockhash_at, error_of, kept
from yieldcli.sandbox.chain.knobs import Network

pytestmark = pytest.mark.sandbox(network=Network(slot_ms=0, blockhash_window=WINDOW))


def pending_named(result, signature: str, home) -> None:
    """Exit 8 naming the signature (stderr line and the JSON error's `signature`), the record kept."""
    assert result.code == 8, result.stderr
    error = error_of(result)
    assert error["kind"].startswith("tx.pending"), error
    assert error.get("signature") == signature, error
    assert signature in result.stderr.strip().splitlines()[-2]
    assert signature in kept(home)


# ---- an unclear send error waits and asks the chain -------------------------------------------------


UNCLEAR = {
    "503": lambda: ForwardThenHttp("status", 503),
    "429": lambda: ForwardThenHttp("status", 429),
    "reset": lambda: ForwardThenHttp("reset"),
    "cut-body": lambda: ForwardThenHttp("cut"),
    "past-timeout": lambda: ForwardThenHttp("delay", 4),
    "BlockhashNotFound": ForwardThenBlockhashNotFound,
}


@pytest.mark.parametrize("fault", UNCLEAR.values(), ids=UNCLEAR.keys())
def test_an_unclear_send_error_asks_the_chain_and_reports_the_landed_deposit(via_proxy, proxy, judge, fault):
    proxy.fault = fault()
    first = via_proxy("--timeout", "2", *DEPOSIT, *TIMEOUT, bound=20)
    # The node had it: the run asks until it sees it landed, instead of exiting at once.
    assert first.code == 0, first.stderr
    assert first.json()["signature"] == proxy.forwarded[0]
    assert judge.succeeded() == [proxy.forwarded[0]] and kept(judge.home) == set()


def test_blockhash_not_found_after_forwarding_is_never_nothing_was_spent(via_proxy, proxy, judge, sandbox):
    proxy.fault = ForwardThenBlockhashNotFound()
    sandbox.runtime.set_fault("pending", count=1)  # the node queued it: it lands later
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert first.code != 9 and "nothing was spent" not in first.stderr, first.stderr
    pending_named(first, proxy.forwarded[0], judge.home)
    proxy.fault = Fault()
    retry = via_proxy(*DEPOSIT, *TIMEOUT)
    assert retry.code == 8 and error_of(retry)["kind"] == "tx.pending.earlier", retry.stderr
    sandbox.runtime.release_pending()
    judge.at_most_one()
    assert len(judge.succeeded()) == 1
    landed = via_proxy(*DEPOSIT, *TIMEOUT)
    assert landed.code == 10 and error_of(landed)["kind"] == "refused.landed_before", landed.stderr
    judge.at_most_one()
    judge.named_or_kept()


# ---- "not landed" is proven, never inferred -----------------------------------------------------------


def _steer(sandbox, inner, *, advance: int, release_on: int):
    """`inner` fault; when the wait first asks a status, the chain moves `advance` blocks; at the
    `release_on`th status question the held transaction lands (after the deadline `inner` lies about)."""
    moved = When(inner, "getSignatureStatuses", lambda: sandbox.runtime.advance_slots(advance))
    return When(moved, "getSignatureStatuses", sandbox.runtime.release_pending, nth=release_on)


def test_a_stale_latest_blockhash_is_not_the_transactions_deadline(via_proxy, proxy, judge, sandbox):
    # The provider's cached getLatestBlockhash is 5 blocks old; the transaction's own blockhash is newer.
    sandbox.runtime.set_fault("pending", count=1)
    stale = StaleLatestBlockhash(behind=5, blockhash_at=blockhash_at(sandbox))
    # Past the stale deadline, before the real one; the held transaction lands a moment later.
    proxy.fault = _steer(sandbox, stale, advance=WINDOW - 3, release_on=4)
    first = via_proxy(*DEPOSIT, "--confirm-timeout", "8", bound=20)
    assert first.code == 0, first.stderr
    assert judge.succeeded() == [first.json()["signature"]]
    judge.named_or_kept()


def test_a_block_height_from_a_node_ahead_does_not_expire_a_queued_transaction(via_proxy, proxy, judge, sandbox):
    sandbox.runtime.set_fault("pending", count=1)
    proxy.fault = HeightShift(WINDOW + 10)
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert first.code != 9 and "nothing was spent" not in first.stderr, first.stderr
    pending_named(first, proxy.forwarded[0], judge.home)
    proxy.fault = Fault()
    retry = via_proxy(*DEPOSIT, *TIMEOUT)
    assert retry.code == 8 and error_of(retry)["kind"] == "tx.pending.earlier", retry.stderr
    sandbox.runtime.release_pending()  # its own blockhash was valid all along: it lands
    judge.at_most_one()
    judge.named_or_kept()


def test_statuses_null_for_a_landed_deposit_and_a_height_ahead_is_not_expired(via_proxy, proxy, judge):
    # It landed at once; the provider's statuses do not know it and its height is another node's.
    proxy.fault = Both(StatusesSay("null"), HeightShift(WINDOW + 10))
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert first.code != 9 and "nothing was spent" not in first.stderr, first.stderr
    pending_named(first, proxy.forwarded[0], judge.home)
    proxy.fault = Fault()
    retry = via_proxy(*DEPOSIT, *TIMEOUT)
    assert retry.code == 10 and error_of(retry)["kind"] == "refused.landed_before", retry.stderr
    assert judge.succeeded() == proxy.forwarded[:1]
    judge.named_or_kept()


def test_a_height_that_goes_backwards_is_the_rpc_disagreeing_with_itself(via_proxy, proxy, judge, sandbox):
    sandbox.runtime.set_fault("pending", count=1)
    proxy.fault = HeightShift(WINDOW + 10, every_other=True)
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    pending_named(first, proxy.forwarded[0], judge.home)
    assert "disagree" in first.stderr, first.stderr
    sandbox.runtime.release_pending()
    proxy.fault = Fault()
    retry = via_proxy(*DEPOSIT, *TIMEOUT)
    assert retry.code == 10 and error_of(retry)["kind"] == "refused.landed_before", retry.stderr
    judge.at_most_one()


def test_a_dropped_send_proven_never_landed_lets_the_next_run_send(via_proxy, proxy, judge, sandbox):
    proxy.fault = DropSend()
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert first.code == 8, first.stderr  # not expired yet: its blockhash is still valid
    signature = proxy.fault.dropped[0]
    assert signature in first.stderr and signature in kept(judge.home)
    proxy.fault = Fault()
    held = via_proxy(*DEPOSIT, *TIMEOUT)
    assert held.code == 8 and error_of(held)["kind"] == "tx.pending.earlier", held.stderr
    sandbox.runtime.advance_slots(WINDOW + 5)  # now its blockhash has passed: proven never landed
    sent = via_proxy(*DEPOSIT, *TIMEOUT)
    assert sent.code == 0, sent.stderr
    assert len(judge.succeeded()) == 1


# ---- "landed" is proven too ---------------------------------------------------------------------------


def test_a_status_that_says_failed_for_a_success_is_not_exit_7(via_proxy, proxy, judge):
    proxy.fault = StatusesSay("failed")
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert first.code != 7, first.stderr
    pending_named(first, proxy.forwarded[0], judge.home)
    assert "disagree" in first.stderr, first.stderr
    proxy.fault = Fault()
    retry = via_proxy(*DEPOSIT, *TIMEOUT)
    assert retry.code == 10 and error_of(retry)["kind"] == "refused.landed_before", retry.stderr
    judge.at_most_one()
    judge.named_or_kept()


def test_confirmed_for_a_send_that_never_reached_the_chain_is_not_success(via_proxy, proxy, judge):
    proxy.fault = Both(DropSend(), StatusesSay("confirmed"))
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert first.code == 8, first.stderr  # judged: exit 0 would need it landed
    signature = proxy.fault.faults[0].dropped[0]
    assert error_of(first).get("signature") == signature and signature in kept(judge.home)
    assert "disagree" in first.stderr, first.stderr
    assert judge.succeeded() == []


@pytest.mark.parametrize("say", ["null", "failed"])
def test_a_transaction_the_rpc_contradicts_is_not_success(via_proxy, proxy, judge, say):
    proxy.fault = TransactionSays(say)
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    pending_named(first, proxy.forwarded[0], judge.home)
    assert "disagree" in first.stderr, first.stderr
    proxy.fault = Fault()
    retry = via_proxy(*DEPOSIT, *TIMEOUT)
    assert retry.code == 10, retry.stderr
    judge.at_most_one()


# ---- what the chain does prove still ends the run: 9 and 7 are not lost to caution --------------------


def test_a_send_proven_never_landed_is_expired_and_the_retry_sends(via_proxy, proxy, judge, sandbox):
    dropped = DropSend()
    # The node never had it; while the run waits, the chain moves past its blockhash's lifetime.
    proxy.fault = When(dropped, "getSignatureStatuses", lambda: sandbox.runtime.advance_slots(WINDOW + 5))
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert first.code == 9 and error_of(first)["kind"] == "tx.expired", first.stderr
    assert dropped.dropped[0] in first.stderr and "nothing was spent" in first.stderr
    assert kept(judge.home) == set() and judge.succeeded() == []
    proxy.fault = Fault()
    retry = via_proxy(*DEPOSIT, *TIMEOUT)
    assert retry.code == 0, retry.stderr
    assert judge.succeeded() == [retry.json()["signature"]]


def test_a_failure_the_chain_shows_is_exit_7_and_the_retry_sends(via_proxy, proxy, judge, sandbox):
    sandbox.runtime.set_fault("fail", count=1)  # it lands and fails: fee paid, nothing else
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert first.code == 7 and error_of(first)["kind"] == "tx.failed", first.stderr
    signature = proxy.forwarded[0]
    assert sandbox.runtime.status(signature).err is not None and signature in first.stderr
    assert kept(judge.home) == set()
    retry = via_proxy(*DEPOSIT, *TIMEOUT)
    assert retry.code == 0, retry.stderr
    assert judge.succeeded() == [retry.json()["signature"]]


# ---- found by an attack: a node missing the history says "unknown" twice ----------------------------


def test_a_node_missing_the_history_never_makes_a_landed_deposit_expired(via_proxy, proxy, judge, sandbox):
    # After the send the status and the transaction are both null (a node without that part of the
    # history), while heights and validity are honest: past the deadline, the signer's own signatures
    # still list it, so it is never "nothing was spent".
    nulls = Both(StatusesSay("null"), TransactionSays("null"))
    proxy.fault = When(nulls, "getSignatureStatuses", lambda: sandbox.runtime.advance_slots(WINDOW + 5))
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert first.code == 8 and "disagree" in first.stderr, first.stderr
    pending_named(first, proxy.forwarded[0], judge.home)
    retry = via_proxy(*DEPOSIT, *TIMEOUT)  # the same RPC, still missing it: still held
    assert retry.code in (8, 10), retry.stderr
    judge.at_most_one()


def test_a_landing_once_proven_is_never_forgotten_on_later_null_answers(via_proxy, proxy, judge, sandbox):
    proxy.fault = StatusesSay("failed")
    first = via_proxy(*DEPOSIT, *TIMEOUT, bound=20)
    assert first.code == 8, first.stderr  # landed, but the RPC contradicted itself
    proxy.fault = Fault()
    told = via_proxy(*DEPOSIT, *TIMEOUT)
    assert told.code == 10 and error_of(told)["kind"] == "refused.landed_before", told.stderr
    sandbox.runtime.advance_slots(WINDOW + 5)
    proxy.fault = Both(StatusesSay("null"), TransactionSays("null"))  # now a node that lacks the history
    again = via_proxy(*DEPOSIT, *TIMEOUT)
    assert again.code == 10 and error_of(again)["kind"] == "refused.landed_before", again.stderr
    judge.at_most_one()
