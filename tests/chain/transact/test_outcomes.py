"""One set of outcome classes: the wait for a sent transaction (`confirm.wait_for`) ends in the
pipeline's own `Confirmed`/`Failed`/`Expired`/`Pending` (`outcomes.py`), with what it learnt in their
fields and `result`; no module defines a second class of those names."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from solders.keypair import Keypair
from solders.system_program import TransferParams, transfer

import yieldcli
from yieldcli.chain.keys.sign import sign_transaction
from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.transact import outcomes
from yieldcli.chain.transact.confirm import wait_for
from yieldcli.chain.transact.proof import Lifetime
from yieldcli.chain.tx.instructions import build_transaction
from yieldcli.errors import TransactionFailed

PACKAGE = Path(yieldcli.__file__).resolve().parent
SOL = 1_000_000_000


def classes_by_name(root: Path, base: Path = PACKAGE) -> dict[str, list[str]]:
    """Every class defined in a module under `root`, by name: the modules that define it (from `base`)."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(str(path.relative_to(base)))
    return found


def test_the_outcome_classes_are_defined_once_in_the_whole_package():
    every = classes_by_name(PACKAGE)
    for name in ("Outcome", "Unsigned", "Signed", "Sent", "Confirmed", "Failed", "Expired", "Pending"):
        assert every.get(name) == ["chain/transact/outcomes.py"], (name, every.get(name))


def test_no_two_classes_of_one_name_in_the_pipeline():
    twice = {name: where for name, where in classes_by_name(PACKAGE / "chain" / "transact").items() if len(where) > 1}
    assert not twice


def test_the_checker_sees_a_second_set(tmp_path):
    (tmp_path / "a.py").write_text("class Confirmed:\n    pass\n")
    (tmp_path / "b.py").write_text("from dataclasses import dataclass\n@dataclass\nclass Confirmed:\n    slot: int\n")
    assert classes_by_name(tmp_path, tmp_path) == {"Confirmed": ["a.py", "b.py"]}


def _send_and_wait(rpc_url: str, payer: Keypair, lamports: int) -> outcomes.Waited:
    async def go() -> outcomes.Waited:
        async with Rpc(rpc_url) as rpc:
            latest = await rpc.latest_blockhash()
            work = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=Keypair().pubkey(), lamports=lamports))
            tx = sign_transaction(build_transaction([work], payer.pubkey(), latest.blockhash), [payer]).transaction
            signature = await rpc.send(tx, skip_preflight=True)  # a failing one must land to fail on chain
            lifetime = Lifetime.of(tx, latest.last_valid_block_height)
            return await wait_for(rpc, signature, lifetime, timeout_s=20, poll_interval=0.02)

    return asyncio.run(go())


def test_a_wait_ends_in_the_pipelines_confirmed_with_its_result(sandbox_chain):
    runtime, server = sandbox_chain
    payer = Keypair()
    runtime.airdrop(payer.pubkey(), SOL)
    outcome = _send_and_wait(server.url, payer, SOL // 10)
    assert type(outcome) is outcomes.Confirmed and type(outcome) is yieldcli.Confirmed
    assert outcome.slot > 0 and outcome.commitment in ("confirmed", "finalized") and outcome.error() is None
    assert outcome.result == {
        "signature": outcome.signature,
        "status": "confirmed",
        "slot": outcome.slot,
        "commitment": outcome.commitment,
    }


def test_a_wait_ends_in_the_pipelines_failed_with_the_error_logs_and_reason(sandbox_chain):
    runtime, server = sandbox_chain
    payer = Keypair()
    runtime.airdrop(payer.pubkey(), SOL)
    outcome = _send_and_wait(server.url, payer, 5 * SOL)  # more than it holds: lands, fails, pays the fee
    assert type(outcome) is outcomes.Failed
    assert outcome.err == {"InstructionError": [0, {"Custom": 1}]}
    assert outcome.reason and any("insufficient lamports" in line for line in outcome.logs)
    assert outcome.result["status"] == "failed" and outcome.result["error"] == outcome.reason
    assert outcome.result["logs"] == outcome.logs and outcome.result["slot"] == outcome.slot
    error = outcome.error()
    assert isinstance(error, TransactionFailed) and error.signature == outcome.signature


def test_an_expired_and_a_pending_outcome_say_why():
    blockhash = outcomes.expired("SIG", 100, 151)
    assert blockhash.why == "its blockhash passed (block height 151 > 100)"
    assert blockhash.result["last_valid_block_height"] == 100 and blockhash.result["block_height"] == 151
    nonce = outcomes.expired("SIG", None, None, "NONCE")
    assert nonce.why == "its durable nonce (account NONCE) moved on" and nonce.nonce_account == "NONCE"
    assert "nothing was spent" in nonce.error().message
    waiting = outcomes.pending("SIG", "processed", "connection reset")
    assert (waiting.last_status, waiting.last_error) == ("processed", "connection reset")
    assert waiting.result["seen"] == "processed"
    assert waiting.why == "still pending after the timeout (seen: processed)"
