"""The official TypeScript SDK (`@breezebaby/breeze-sdk`) against `yield sandbox serve`: an
independent client, written for the real service, must get answers of the shapes it expects."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

from tests.conftest import YIELD
from tests.library.node import node_with
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET
from yieldcli.tokens import by_symbol

JS_DIR = Path(__file__).resolve().parents[1] / "js"
USDC = by_symbol("USDC").mint


def _node() -> str:
    return node_with("@breezebaby/breeze-sdk")


def _transaction(text: str) -> bytes:
    raw = base64.b64decode(text, validate=True)
    assert raw and len(raw) <= 1232
    return raw


def test_every_sdk_method_against_sandbox_serve(isolated):
    node = _node()
    serve = subprocess.Popen(
        [YIELD, "sandbox", "serve", "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        info = json.loads(serve.stdout.readline())
        from yieldcli.sandbox.ledger import Ledger

        state = isolated / ".local" / "share" / "yield" / "sandbox" / "state.json"
        fund_id = Ledger(state).fund_for(DEMO_STRATEGY_ID, USDC)["fund_id"]
        args = [
            node,
            str(JS_DIR / "sdk_drive.mjs"),
            info["url"],
            info["api_key"],
            DEMO_WALLET,
            DEMO_STRATEGY_ID,
            fund_id,
            USDC,
        ]
        done = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=JS_DIR)
    finally:
        serve.terminate()
        serve.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)

    for name in ("getUserYield", "getUserYieldByFund", "getUserBalances", "getUserBalancesBySymbol", "breezeBalances"):
        assert got[name]["ok"], (name, got[name])
        body = got[name]["value"]
        assert set(body) == {"data", "meta"} and body["data"], name
        assert set(body["meta"]) == {"has_more", "page", "per_page", "total", "total_pages"}
    assert {y["fund_id"] for y in got["getUserYieldByFund"]["value"]["data"]} == {fund_id}
    assert [b["token_symbol"] for b in got["getUserBalancesBySymbol"]["value"]["data"]] == ["USDC"]
    assert got["getUserBalances"]["value"]["meta"]["per_page"] == 5
    assert got["strategyInfo"]["ok"] and got["strategyInfo"]["value"]["strategy_id"] == DEMO_STRATEGY_ID

    # The SDK's own write methods send fund_id without strategy_id: the service's documented refusals,
    # which the SDK raises as BreezeApiError with the status and message.
    for name, message in (
        ("createDepositTransaction", "strategy_id must be provided for deposit"),
        ("getDepositInstructions", "strategy_id must be provided for deposit"),
        ("createWithdrawTransaction", "Strategy id must be provided"),
        ("getWithdrawInstruction", "Strategy id must be provided"),
    ):
        assert got[name] == {"ok": False, "status": 400, "message": message, "name": "BreezeApiError"}, name

    # Every /tx answer is a bare string the SDK's types expect; /ix answers carry instructions.
    for name in ("depositTx", "depositTxAmountAndAll", "withdrawTx", "closeTx"):
        assert got[name]["ok"] and isinstance(got[name]["value"], str), (name, got[name])
        _transaction(got[name]["value"])
    for name, key in (
        ("depositIx", "deposit_instructions"),
        ("withdrawIx", "withdraw_instructions"),
        ("closeIx", "close_user_fund_instructions"),
    ):
        assert got[name]["ok"], (name, got[name])
        instructions = got[name]["value"][key]
        assert instructions and all(len(ix["program_id"]) == 32 and isinstance(ix["data"], list) for ix in instructions)
        for ix in instructions:
            assert all(
                set(a) == {"pubkey", "is_signer", "is_writable"} and len(a["pubkey"]) == 32 for a in ix["accounts"]
            )
    assert isinstance(got["depositIx"]["value"]["lookup_table"], str)
