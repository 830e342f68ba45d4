"""With --ix, `-o json` carries the service's answer as it came, beside the transaction yield compiled.

Callers of the /ix endpoints build their own transactions: the instructions and the lookup table
the service gave are theirs to read, whatever `yield` then did with them.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.conftest import TEST_API_KEY
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET
from yieldcli.tokens import by_symbol

USDC = by_symbol("USDC").mint


def ask_service(sandbox, path: str, params: dict) -> dict:
    request = urllib.request.Request(
        sandbox.url + path,
        json.dumps({"params": params}).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "x-api-key": TEST_API_KEY},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


@pytest.mark.parametrize(
    "command, key",
    [
        (["deposit", "--amount", "10"], "deposit_instructions"),
        (["withdraw", "--amount", "1"], "withdraw_instructions"),
    ],
)
def test_ix_json_holds_the_services_answer(chain, sandbox, command, key):  # noqa: F811
    if command[0] == "withdraw":
        assert chain("deposit", "--asset", "USDC", "--amount", "5", "--send", "--yes", "-o", "json").code == 0
    result = chain(*command, "--asset", "USDC", "--ix", "-o", "json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    answer = data["service_answer"]
    assert isinstance(answer[key], list) and answer[key] and "lookup_table" in answer
    # As it came: the same answer the service gives for the same request.
    params = {
        "strategy_id": DEMO_STRATEGY_ID,
        "base_asset": USDC,
        "user_key": DEMO_WALLET,
        "payer_key": DEMO_WALLET,
        "amount": 10_000_000 if command[0] == "deposit" else 1_000_000,
    }
    assert ask_service(sandbox, f"/{command[0]}/ix", params)[key] == answer[key]
    assert data["transaction"] and data["status"] == "unsigned"


def test_without_ix_there_is_no_service_answer(chain):  # noqa: F811
    data = json.loads(chain("deposit", "--asset", "USDC", "--amount", "10", "-o", "json").stdout)
    assert "service_answer" not in data
