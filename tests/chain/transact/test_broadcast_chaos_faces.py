"""Every write face under the chaos RPC: `withdraw`, `close-account`, `tx send FILE`, the Python `Client`
and `yield mcp`'s execute (deposit is test_broadcast_chaos.py's). The faults are the two that cost a
second landing today: a send answered BlockhashNotFound after the node took it, and a status that says
a success failed. Judged by the chain read directly; each face's intent is then retried once."""

from __future__ import annotations

import json
from decimal import Decimal

import anyio
import pytest

from tests.chain.transact.chaos_rpc import Fault, ForwardThenBlockhashNotFound, ForwardThenHttp, StatusesSay
from tests.chain.transact.conftest import TIMEOUT, WINDOW, WITHDRAW, error_of, kept
from tests.conftest import writing_client
from tests.mcp.harness import POLICY, server_env, session, structured, write_private
from yieldcli.sandbox.chain.knobs import Network

pytestmark = pytest.mark.sandbox(network=Network(slot_ms=0, blockhash_window=WINDOW))

CLOSE = ("close-account", "--asset", "USDT", "--send", "--yes", "-o", "json")


def _empty_usdt(chain) -> None:
    """A USDT account with nothing in the strategy, so close-account has something to close."""
    assert chain("deposit", "--asset", "USDT", "--amount", "1", "--send", "--yes").code == 0
    assert chain("withdraw", "--asset", "USDT", "--all", "--send", "--yes").code == 0


def _signed_file(chain, tmp_path):
    made = chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-o", "json")
    assert made.code == 0, made.stderr
    path = tmp_path / "signed.json"
    path.write_text(made.stdout)
    return ("tx", "send", str(path), "--yes", "-o", "json")


def _command(face, chain, tmp_path):
    if face == "withdraw":
        return WITHDRAW
    if face == "close-account":
        _empty_usdt(chain)
        return CLOSE
    return _signed_file(chain, tmp_path)


FACES = ["withdraw", "close-account", "tx-send-file"]


@pytest.mark.parametrize("face", FACES)
def test_blockhash_not_found_after_forwarding_keeps_the_record_on_every_command(
    face, chain, via_proxy, proxy, judge, sandbox, tmp_path
):
    command = _command(face, chain, tmp_path)
    proxy.fault = ForwardThenBlockhashNotFound()
    sandbox.runtime.set_fault("pending", count=1)  # the node queued it
    first = via_proxy(*command, *TIMEOUT, bound=20)
    signature = proxy.forwarded[0]
    assert first.code == 8 and "nothing was spent" not in first.stderr, first.stderr
    assert error_of(first).get("signature") == signature and signature in kept(judge.home)
    proxy.fault = Fault()
    retry = via_proxy(*command, *TIMEOUT)
    assert retry.code == 8 and error_of(retry)["kind"].startswith("tx.pending"), retry.stderr
    assert signature in retry.stderr  # the earlier one (for the same file: the very same one) named
    sandbox.runtime.release_pending()
    assert judge.succeeded() == [signature]
    judge.named_or_kept()


@pytest.mark.parametrize("face", FACES)
def test_a_503_after_forwarding_asks_the_chain_on_every_command(face, chain, via_proxy, proxy, judge, tmp_path):
    command = _command(face, chain, tmp_path)
    proxy.fault = ForwardThenHttp("status", 503)
    first = via_proxy(*command, *TIMEOUT, bound=20)
    assert first.code == 0, first.stderr  # the node had it: it landed, and the run saw it land
    assert judge.succeeded() == [first.json()["signature"]] == list(dict.fromkeys(proxy.forwarded))
    assert kept(judge.home) == set()


@pytest.mark.parametrize("face", FACES)
def test_a_status_that_says_failed_for_a_success_is_not_exit_7_on_every_command(
    face, chain, via_proxy, proxy, judge, tmp_path
):
    command = _command(face, chain, tmp_path)
    proxy.fault = StatusesSay("failed")
    first = via_proxy(*command, *TIMEOUT, bound=20)
    signature = proxy.forwarded[0]
    assert first.code == 8, first.stderr
    assert error_of(first)["kind"].startswith("tx.pending") and "disagree" in first.stderr
    assert error_of(first).get("signature") == signature and signature in kept(judge.home)
    proxy.fault = Fault()
    retry = via_proxy(*command, *TIMEOUT)
    # 10: the earlier one landed; 0 only for the very same bytes, already landed; a closed account has
    # nothing left to close (the service says so before anything is built).
    assert retry.code in (0, 10) or (face == "close-account" and retry.code == 5), retry.stderr
    assert set(proxy.forwarded) == {signature}  # nothing more was sent
    assert judge.succeeded() == [signature]
    judge.named_or_kept()


# ---- the Python client ---------------------------------------------------------------------------------


def _client_deposit(sandbox, journal, proxy):
    with writing_client(sandbox, journal, rpc_url=proxy.url) as client:
        return client.deposit("USDC", Decimal("1"), timeout=4).send(confirm=lambda text, review: True)


def test_the_client_reports_a_deposit_the_rpc_said_blockhash_not_found_for(sandbox, journal, proxy, judge):
    from yieldcli import Confirmed

    proxy.fault = ForwardThenBlockhashNotFound()
    try:
        outcome = _client_deposit(sandbox, journal, proxy)
    except Exception as exc:  # the contract: not an error at all, the landed deposit
        outcome = exc
    assert isinstance(outcome, Confirmed), repr(outcome)
    assert outcome.signature == proxy.forwarded[0] and judge.succeeded() == [outcome.signature]


def test_the_client_never_says_failed_for_a_success(sandbox, journal, proxy, judge):
    from yieldcli import Failed, TransactionPending

    proxy.fault = StatusesSay("failed")
    try:
        outcome = _client_deposit(sandbox, journal, proxy)
    except TransactionPending as exc:
        outcome = exc
    assert not isinstance(outcome, Failed), repr(outcome)
    signature = proxy.forwarded[0]
    assert signature in str(getattr(outcome, "signature", "")) and signature in json.dumps(
        json.loads(journal.read_text())
    )
    proxy.fault = Fault()
    try:
        again = _client_deposit(sandbox, journal, proxy)
    except Exception as exc:  # refused: the earlier one landed
        again = exc
    assert getattr(again, "kind", "") == "refused.landed_before", repr(again)
    assert judge.succeeded() == [signature]


# ---- yield mcp's execute -------------------------------------------------------------------------------


def test_mcp_execute_reports_the_deposit_the_rpc_said_blockhash_not_found_for(sandbox, proxy, judge, tmp_path):
    home = tmp_path / "agent"
    policy = write_private(home / "policy.toml", POLICY)
    env = {**server_env(sandbox, home), "YIELD_RPC_URL": proxy.url, "HOME": str(home)}
    proxy.fault = ForwardThenBlockhashNotFound()

    async def body() -> list:
        answers = []
        async with session(env, "--policy", str(policy)) as client:
            for _ in range(2):  # the agent retries what did not succeed
                with anyio.fail_after(60):
                    proposal = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
                    executed = await client.call_tool("execute", {"proposal_id": proposal["proposal_id"]})
                answers.append(executed)
                if not executed.is_error and structured(executed).get("status") == "confirmed":
                    break
                proxy.fault = Fault()
        return answers

    answers = anyio.run(body)
    assert len(judge.succeeded()) == 1, answers  # one intent, one landing
    first = answers[0]
    assert not first.is_error and structured(first).get("status") == "confirmed", first
    assert structured(first).get("signature") == proxy.forwarded[0]
