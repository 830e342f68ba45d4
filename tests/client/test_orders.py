"""One order builder (`yieldcli/client/orders.py`): what the intent check verifies is read from the request
the service is sent, and no other module writes either of them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from solders.pubkey import Pubkey

from yieldcli.client import orders
from yieldcli.client.actions import CLOSE, DEPOSIT, WITHDRAW
from yieldcli.errors import UsageError
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET
from yieldcli.tokens import by_symbol

PACKAGE = Path(orders.__file__).parent
USDC = by_symbol("USDC").mint
PAYER = "11111111111111111111111111111112"


def test_the_checked_request_is_read_from_the_body_the_service_gets():
    order = orders.order_for(
        WITHDRAW,
        strategy_id=DEMO_STRATEGY_ID,
        mint=USDC,
        wallet=DEMO_WALLET,
        payer=PAYER,
        amount=1_500_000,
        options={"exclude_fees": True, "unwrap_wsol": True},
    )
    body, request = order.params, order.request
    assert order.path == "/withdraw" and body["amount"] == request.amount == 1_500_000
    assert (body["user_key"], body["payer_key"], body["base_asset"]) == (
        request.wallet,
        request.expected_payer,
        request.mint,
    )
    assert request.exclude_fees and request.unwrap and request.named_signers == {DEMO_WALLET, PAYER}


def test_everything_and_a_close_and_a_named_signer():
    everything = orders.order_for(
        DEPOSIT, strategy_id=DEMO_STRATEGY_ID, mint=USDC, wallet=DEMO_WALLET, payer=DEMO_WALLET, amount=None
    )
    assert everything.params["all"] is True and "amount" not in everything.params and everything.request.amount is None
    close = orders.order_for(CLOSE, wallet=DEMO_WALLET, payer=PAYER, strategy_id=DEMO_STRATEGY_ID, mint=USDC)
    assert close.path == "/close-user-account" and close.request.action == "close-account"
    assert (close.params["user_pubkey"], close.params["payer"]) == (close.request.wallet, close.request.expected_payer)
    by_account = orders.order_for(CLOSE, wallet=DEMO_WALLET, payer=DEMO_WALLET, position=PAYER)
    assert by_account.params["user_account"] == PAYER and by_account.request.wallet == DEMO_WALLET
    assert by_account.signed_also_by(PAYER).request.named_signers == {DEMO_WALLET, PAYER}


def test_base_units_are_exact_and_ask_for_decimals_only_when_unknown():
    asked = []
    assert orders.base_units(USDC, "1.5", None, False, lambda: asked.append(1) or 9) == 1_500_000 and asked == []
    unknown_mint = str(Pubkey.new_unique())
    assert orders.base_units(unknown_mint, "1.5", None, False, lambda: 2) == 150
    assert orders.base_units(USDC, None, 7, False, lambda: None) == 7
    assert orders.base_units(USDC, None, None, True, lambda: None) is None
    with pytest.raises(UsageError) as unknown:
        orders.base_units(unknown_mint, "1", None, False, lambda: None)
    assert unknown.value.kind == "usage.amount.decimals"


def _strings(path: Path) -> set[str]:
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def _calls(path: Path, name: str) -> int:
    return sum(
        1
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == name
    )


def test_no_other_module_writes_a_service_body_or_the_request_to_check():
    # The sandbox is the service: it reads these fields, it does not build orders. The action rows
    # (actions.py) name each action's fields; orders.py alone fills them in.
    for path in PACKAGE.rglob("*.py"):
        if path.name in ("orders.py", "actions.py") or "sandbox" in path.parts:
            continue
        assert not _strings(path) & {"user_key", "payer_key", "funds_recipient", "user_pubkey", "in-flight.json"}, path
        assert _calls(path, "UserRequest") == 0, path
