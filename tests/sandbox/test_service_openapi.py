"""Every body the sandbox serves matches the schema tests/contract/openapi.json declares for it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.contract.openapi_doc import DOC
from tests.contract.openapi_doc import pointer as _pointer
from tests.contract.openapi_doc import template as _template
from tests.contract.openapi_doc import validator as _validator
from yieldcli.sandbox.demo import (
    DEMO_STRATEGY_ID,
    DEMO_WALLET,
    SECOND_STRATEGY_ID,
    WHALE_WALLET,
    seeded_wallet_addresses,
    synthetic_mint,
)
from yieldcli.sandbox.ledger import Ledger
from yieldcli.sandbox.service import Response, Service
from yieldcli.tokens import by_symbol

KEY = "contract-key"
USDC = by_symbol("USDC").mint
EMPTY_WALLET = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"


def check(method: str, path: str, response: Response) -> Any:
    """Validate `response` against the document; returns the decoded body."""
    template = _template(path)
    operation = DOC["paths"][template][method.lower()]
    declared = operation["responses"].get(str(response.status))
    media = response.content_type.split(";")[0].strip()
    body = json.loads(response.body)
    if declared is not None and media in declared.get("content", {}):
        pointer = _pointer(
            "paths", template, method.lower(), "responses", str(response.status), "content", media, "schema"
        )
        _validator(pointer).validate(body)
    elif media == "text/plain":
        # interface.md: an unparseable query is answered in plain text, as a JSON string literal.
        assert response.status == 400
        assert isinstance(body, str) and body.startswith("Failed to deserialize query string: ")
    else:
        # Statuses the document does not list (401, 404, 405, 415, 501) use the service's error body.
        assert media == "application/json", response.content_type
        _validator("components/schemas/ErrorResponse").validate(body)
    return body


@pytest.fixture
def svc(tmp_path: Path) -> Service:
    return Service(Ledger(tmp_path / "state.json", seed_positions=30, seed_wallets=5), KEY)


def _get(svc: Service, path: str, query: str = "", key: str | None = KEY) -> tuple[str, str, Response]:
    headers = {"x-api-key": key} if key is not None else {}
    return "GET", path, svc.handle("GET", path, query, headers, b"")


def _post(svc: Service, path: str, body: Any) -> tuple[str, str, Response]:
    headers = {"x-api-key": KEY, "content-type": "application/json"}
    return "POST", path, svc.handle("POST", path, "", headers, json.dumps(body).encode())


S = f"strategy_id={DEMO_STRATEGY_ID}"
WALLETS = [DEMO_WALLET, WHALE_WALLET, EMPTY_WALLET, *seeded_wallet_addresses(2)]

OK_REQUESTS: list[tuple[str, str]] = [
    ("/health", ""),
    (f"/strategy-info/{DEMO_STRATEGY_ID}", ""),
    (f"/strategy-info/{DEMO_STRATEGY_ID}/", ""),
    (f"/strategy-info/{SECOND_STRATEGY_ID}", ""),
]
for _w in WALLETS:
    OK_REQUESTS += [
        (f"/breeze-balances/{_w}", S),
        (f"/breeze-balances/{_w}", f"strategy_id={SECOND_STRATEGY_ID}"),
        (f"/breeze-balances/{_w}", f"{S}&sort_by=balance&sort_order=asc&limit=3&page=2"),
        (f"/breeze-balances/{_w}", f"{S}&asset={USDC}"),
        (f"/breeze-balances/{_w}", f"{S}&page=999"),
        (f"/user-balances/{_w}", ""),
        (f"/user-balances/{_w}", "page=0&limit=0"),
        (f"/user-balances/{_w}", "page=2&limit=100&sort_by=total_balance&sort_order=desc"),
        (f"/user-balances/{_w}", f"asset={USDC}"),
        (f"/user-balances/{_w}", f"asset={synthetic_mint(3)}"),
        (f"/user-yield/{_w}", ""),
        (f"/user-yield/{_w}", "page=3&limit=4"),
        (f"/user-yield/{_w}", "fund_id=00000000-5eed-4000-8000-000000000007"),
        (f"/user-yield/{_w}", "page=2147483647"),
    ]


@pytest.mark.parametrize("path, query", OK_REQUESTS)
def test_200_bodies_match_the_document(svc, path, query):
    method, path, response = _get(svc, path, query)
    assert response.status == 200, response.body
    check(method, path, response)


def test_items_use_only_documented_fields(svc):
    schemas = DOC["components"]["schemas"]
    cases = [
        (f"/breeze-balances/{DEMO_WALLET}", f"{S}&limit=100", "StrategyPosition"),
        (f"/user-balances/{DEMO_WALLET}", "limit=100", "UserBalance"),
        (f"/user-yield/{DEMO_WALLET}", "limit=100", "UserYield"),
    ]
    for path, query, name in cases:
        body = check(*_get(svc, path, query))
        documented = set(schemas[name]["properties"])
        assert body["data"]
        for item in body["data"]:
            assert set(item) == documented, name
        assert set(body["meta"]) == set(schemas["PaginationMeta"]["properties"])
    strategy = check(*_get(svc, f"/strategy-info/{DEMO_STRATEGY_ID}"))
    assert set(strategy) == set(schemas["Strategy"]["properties"])
    balances = check(*_get(svc, f"/user-balances/{DEMO_WALLET}", "limit=100"))["data"]
    for b in balances:
        if b["yield_balance"] is not None:
            assert set(b["yield_balance"]) == set(schemas["YieldBalance"]["properties"])


ERROR_REQUESTS: list[tuple[str, str, str | None, int]] = [
    ("/health", "", None, 401),
    ("/health", "", "wrong", 401),
    (f"/user-balances/{DEMO_WALLET}", "", None, 401),
    (f"/user-yield/{DEMO_WALLET}", "", "wrong", 401),
    (f"/strategy-info/{DEMO_STRATEGY_ID}", "", None, 401),
    ("/strategy-info/nope", "", KEY, 404),
    (f"/breeze-balances/{DEMO_WALLET}", "", KEY, 400),
    (f"/breeze-balances/{DEMO_WALLET}", "strategy_id=nope", KEY, 404),
    (f"/breeze-balances/{DEMO_WALLET}", f"{S}&sort_by=token_name", KEY, 400),
    (f"/breeze-balances/{DEMO_WALLET}", f"{S}&page=x", KEY, 400),
    (f"/breeze-balances/{DEMO_WALLET}", f"{S}&sort_order=sideways", KEY, 400),
    (f"/user-balances/{DEMO_WALLET}", "page=-3", KEY, 400),
    (f"/user-balances/{DEMO_WALLET}", "limit=4294967296", KEY, 400),
    (f"/user-balances/{DEMO_WALLET}", "sort_by=nope", KEY, 400),
    ("/user-balances/not-a-wallet", "", KEY, 400),
    (f"/user-yield/{DEMO_WALLET}", "page=one", KEY, 400),
]


@pytest.mark.parametrize("path, query, key, status", ERROR_REQUESTS)
def test_error_bodies_match_the_document(svc, path, query, key, status):
    method, path, response = _get(svc, path, query, key)
    assert response.status == status, response.body
    check(method, path, response)


POST_REQUESTS: list[tuple[str, dict[str, Any], int]] = [
    ("/deposit/tx", {"params": {}}, 400),
    ("/deposit/ix", {"params": {"base_asset": USDC}}, 400),
    ("/withdraw/tx", {"params": {"all": True}}, 400),
    ("/withdraw/ix", {"params": {}}, 400),
    ("/close-user-account/tx", {"params": {}}, 400),
    ("/close-user-account/ix", {"params": {"user_pubkey": DEMO_WALLET}}, 400),
    ("/deposit/tx", {"nope": {}}, 400),
    ("/deposit/tx", {"params": {"strategy_id": DEMO_STRATEGY_ID, "amount": -1}}, 400),
    ("/deposit/tx", {"params": {"strategy_id": DEMO_STRATEGY_ID, "base_asset": USDC, "amount": 1}}, 501),
    ("/withdraw/ix", {"params": {"strategy_id": DEMO_STRATEGY_ID, "all": True}}, 501),
    ("/close-user-account/tx", {"params": {"user_account": DEMO_WALLET}}, 501),
]


@pytest.mark.parametrize("path, body, status", POST_REQUESTS)
def test_post_error_bodies_match_the_document(svc, path, body, status):
    method, path, response = _post(svc, path, body)
    assert response.status == status, response.body
    check(method, path, response)


def test_internal_error_body_matches_the_document(svc):
    def broken(params: dict[str, Any]) -> Response:
        raise RuntimeError("bug")

    svc.post_handlers["/withdraw/ix"] = broken
    method, path, response = _post(svc, "/withdraw/ix", {"params": {"strategy_id": DEMO_STRATEGY_ID}})
    assert response.status == 500
    assert check(method, path, response) == {"message": "Internal server error"}


def test_every_documented_operation_is_routed(svc):
    """No operation of the document falls through to the sandbox's unknown-path 404."""
    for template, operations in DOC["paths"].items():
        path = re.sub(r"\{[^}]+\}", DEMO_WALLET, template)
        for method in operations:
            if method == "get":
                _, _, response = _get(svc, path, S)
            else:
                _, _, response = _post(svc, path, {"params": {}})
            assert response.status != 405
            if response.status == 404:
                assert response.json() == {"message": "Strategy not found"}, (method, template)


def test_document_parameters_are_the_ones_served():
    """The query parameters the sandbox reads are exactly the ones the document declares."""
    from yieldcli.sandbox import service

    expected = {
        "/breeze-balances/{user_id}": {"strategy_id", "asset", "sort_by", "sort_order", "page", "limit"},
        "/user-balances/{fund_user}": {"asset", "sort_by", "sort_order", "page", "limit"},
        "/user-yield/{fund_user}": {"fund_id", "page", "limit"},
    }
    for template, names in expected.items():
        declared = {p["name"] for p in DOC["paths"][template]["get"]["parameters"] if p["in"] == "query"}
        assert declared == names
    required = [
        p["name"]
        for p in DOC["paths"]["/breeze-balances/{user_id}"]["get"]["parameters"]
        if p.get("required") and p["in"] == "query"
    ]
    assert required == ["strategy_id"]
    assert set(service.POST_FIELDS["/withdraw/ix"]) == set(
        DOC["components"]["schemas"]["InputForWithdraw"]["properties"]
    )
    assert set(service.POST_FIELDS["/deposit/tx"]) == set(DOC["components"]["schemas"]["InputForDeposit"]["properties"])
    assert set(service.POST_FIELDS["/close-user-account/tx"]) == set(
        DOC["components"]["schemas"]["InputForCloseUserAccount"]["properties"]
    )


def test_validator_rejects_a_wrong_body():
    """The harness itself catches a body that breaks the document."""
    import jsonschema

    wrong = Response(200, "application/json", json.dumps({"data": [{"token_address": 1}], "meta": {}}).encode())
    with pytest.raises(jsonschema.ValidationError):
        check("GET", f"/user-balances/{DEMO_WALLET}", wrong)
