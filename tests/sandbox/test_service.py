"""The sandbox service: endpoints, auth, pagination, query failures, ledger, seeds, faults, HTTP server."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from yieldcli.addresses import is_pubkey
from yieldcli.sandbox import demo
from yieldcli.sandbox.demo import (
    DEMO_STRATEGY_ID,
    DEMO_WALLET,
    SECOND_STRATEGY_ID,
    WHALE_WALLET,
    seeded_wallet_addresses,
)
from yieldcli.sandbox.ledger import Ledger, LedgerError
from yieldcli.sandbox.server import SandboxServer
from yieldcli.sandbox.service import PLAIN_TEXT, Response, Service, json_response
from yieldcli.tokens import KNOWN_TOKENS, NATIVE_SOL_PSEUDO_MINT, by_symbol

KEY = "test-key-123"
USDC = by_symbol("USDC").mint
JLP = by_symbol("JLP").mint
UNKNOWN_WALLET = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "sandbox" / "state.json"


@pytest.fixture
def svc(state: Path) -> Service:
    return Service(Ledger(state), KEY)


def get(svc: Service, path: str, query: str = "", key: str | None = KEY) -> Response:
    headers = {"x-api-key": key} if key is not None else {}
    return svc.handle("GET", path, query, headers, b"")


def ok(svc: Service, path: str, query: str = "") -> dict:
    r = get(svc, path, query)
    assert r.status == 200, r.body
    assert r.content_type == "application/json"
    return r.json()


def post(svc: Service, path: str, body: object, content_type: str = "application/json") -> Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return svc.handle("POST", path, "", {"X-Api-Key": KEY, "Content-Type": content_type}, raw)


# ---- demo data -----------------------------------------------------------------------------------


def test_demo_wallet_constants_match_their_seeds():
    assert len(demo.DEMO_WALLET_SEED) == 32 and len(demo.WHALE_WALLET_SEED) == 32
    assert str(demo.demo_keypair().pubkey()) == DEMO_WALLET
    assert str(demo.whale_keypair().pubkey()) == WHALE_WALLET
    assert demo.demo_keypair() == demo.demo_keypair()


def test_seeded_wallet_addresses_are_valid_deterministic_and_distinct():
    a = seeded_wallet_addresses(50)
    assert a == seeded_wallet_addresses(50)
    assert len(set(a)) == 50 and all(is_pubkey(x) for x in a)
    assert DEMO_WALLET not in a and WHALE_WALLET not in a


def test_synthetic_mint_round_trips():
    for i in (0, 1, 99_999, 2**40):
        assert is_pubkey(demo.synthetic_mint(i))
        assert demo.synthetic_index(demo.synthetic_mint(i)) == i
    assert demo.synthetic_index(USDC) is None
    assert demo.synthetic_index("not base58 0OIl") is None


def test_initial_state_is_deterministic():
    assert json.dumps(demo.initial_state()) == json.dumps(demo.initial_state())


def test_modules_do_not_import_heavy_dependencies():
    code = (
        "import sys, yieldcli.sandbox.server, yieldcli.sandbox.service, yieldcli.sandbox.ledger,"
        " yieldcli.sandbox.demo, yieldcli.sandbox, tempfile;"
        " yieldcli.sandbox.server.SandboxServer(tempfile.mkdtemp() + '/state.json').service.handle('GET', '/health');"
        "print(sorted(m for m in ('solders','solana','keyring','rich','httpx','httpx2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- auth ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/health", f"/strategy-info/{DEMO_STRATEGY_ID}", f"/user-balances/{DEMO_WALLET}", "/no-such-path"],
)
def test_missing_and_wrong_keys(svc, path):
    r = get(svc, path, key=None)
    assert (r.status, r.json()) == (401, {"message": "Missing credentials"})
    r = get(svc, path, key="")
    assert (r.status, r.json()) == (401, {"message": "Missing credentials"})
    r = get(svc, path, key="wrong")
    assert (r.status, r.json()) == (401, {"message": "API key invalid or doesn't exist"})


def test_header_name_is_case_insensitive(svc):
    r = svc.handle("GET", "/health", "", {"X-API-KEY": KEY}, b"")
    assert r.status == 200


# ---- read endpoints ------------------------------------------------------------------------------


def test_health(svc):
    r = get(svc, "/health")
    assert (r.status, r.content_type, r.body) == (200, "application/json", b'"OK"')


def test_strategy_info(svc):
    body = ok(svc, f"/strategy-info/{DEMO_STRATEGY_ID}")
    assert body["strategy_id"] == DEMO_STRATEGY_ID
    assert body["strategy_name"] == "Sandbox Yield Strategy"
    # The service's tokens, and a base asset on Token-2022 (PYUSD), as the published service lists.
    assert set(body["assets"]) == {t.mint for t in KNOWN_TOKENS} | {demo.PYUSD_MINT}
    assert set(body["apy_per_asset"]) == set(body["assets"])
    assert min(body["apy_per_asset"].values()) <= body["apy"] <= max(body["apy_per_asset"].values())
    assert ok(svc, f"/strategy-info/{DEMO_STRATEGY_ID}/") == body
    second = ok(svc, f"/strategy-info/{SECOND_STRATEGY_ID}")
    assert second["strategy_name"] != body["strategy_name"]


def test_unknown_strategy_and_path(svc):
    r = get(svc, "/strategy-info/nope")
    assert (r.status, r.json()) == (404, {"message": "Strategy not found"})
    r = get(svc, "/strategy-info/")
    assert r.status == 404 and "message" in r.json()
    r = get(svc, "/nothing/here")
    assert r.status == 404 and r.json()["message"]
    r = get(svc, f"/breeze-balances/{DEMO_WALLET}", "strategy_id=nope")
    assert (r.status, r.json()) == (404, {"message": "Strategy not found"})


def test_wrong_method(svc):
    r = svc.handle("POST", "/health", "", {"x-api-key": KEY}, b"")
    assert r.status == 405 and r.headers["Allow"] == "GET" and r.json()["message"]
    r = svc.handle("GET", "/deposit/tx", "", {"x-api-key": KEY}, b"")
    assert r.status == 405 and r.headers["Allow"] == "POST"


def test_breeze_balances(svc):
    body = ok(svc, f"/breeze-balances/{DEMO_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}")
    assert len(body["data"]) >= 6
    assert {p["strategy_id"] for p in body["data"]} == {DEMO_STRATEGY_ID}
    for p in body["data"]:
        assert p["yield_earned"] == p["total_position_value"] - p["total_deposited_value"]
        assert p["last_updated"].endswith("+00:00")
    second = ok(svc, f"/breeze-balances/{DEMO_WALLET}", f"strategy_id={SECOND_STRATEGY_ID}")
    assert second["data"] and {p["strategy_id"] for p in second["data"]} == {SECOND_STRATEGY_ID}


def test_breeze_balances_requires_strategy_id(svc):
    for query in ("", "strategy_id=", "page=1"):
        r = get(svc, f"/breeze-balances/{DEMO_WALLET}", query)
        assert (r.status, r.json()) == (400, {"message": "strategy_id query parameter is required"})


def test_user_balances(svc):
    body = ok(svc, f"/user-balances/{DEMO_WALLET}", "limit=100")
    data = body["data"]
    assert body["meta"]["total"] == len(data) >= 12
    mints = [b["token_address"] for b in data]
    assert len(set(mints)) == len(mints)
    assert NATIVE_SOL_PSEUDO_MINT in mints
    nulls = [b for b in data if b["yield_balance"] is None]
    assert nulls and any(b["token_address"] == NATIVE_SOL_PSEUDO_MINT for b in nulls)
    with_yield = [b for b in data if b["yield_balance"] is not None]
    assert len(with_yield) >= 6
    for b in with_yield:
        yb = b["yield_balance"]
        assert isinstance(yb["funds"], str) and isinstance(yb["amount_of_yield"], str)
        assert int(yb["funds"]) <= b["total_balance"]


def test_user_yield(svc):
    body = ok(svc, f"/user-yield/{DEMO_WALLET}", "limit=50")
    assert body["meta"]["total"] == len(body["data"]) >= 12
    r = body["data"][0]
    assert set(r) == {
        "apy",
        "base_asset",
        "entry_date",
        "fund_id",
        "fund_name",
        "last_updated",
        "position_value",
        "yield_earned",
    }
    one = ok(svc, f"/user-yield/{DEMO_WALLET}", f"fund_id={r['fund_id']}")
    assert one["data"] == [r] and one["meta"]["total"] == 1
    assert ok(svc, f"/user-yield/{DEMO_WALLET}", "fund_id=nope")["data"] == []


def test_unknown_wallet_is_empty_and_invalid_wallet_is_refused(svc):
    for path, query in [
        (f"/user-balances/{UNKNOWN_WALLET}", ""),
        (f"/user-yield/{UNKNOWN_WALLET}", ""),
        (f"/breeze-balances/{UNKNOWN_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}"),
    ]:
        body = ok(svc, path, query)
        assert body == {
            "data": [],
            "meta": {"has_more": False, "page": 1, "per_page": 10, "total": 0, "total_pages": 0},
        }
    r = get(svc, "/user-balances/not-a-wallet")
    assert r.status == 400 and "not-a-wallet" in r.json()["message"]


# ---- pagination ----------------------------------------------------------------------------------


def test_pagination_meta_across_pages(svc):
    first = ok(svc, f"/user-balances/{DEMO_WALLET}")
    total = first["meta"]["total"]
    assert total > 10
    pages = -(-total // 10)
    assert first["meta"] == {"has_more": True, "page": 1, "per_page": 10, "total": total, "total_pages": pages}
    assert len(first["data"]) == 10
    last = ok(svc, f"/user-balances/{DEMO_WALLET}", f"page={pages}")
    assert last["meta"]["has_more"] is False and len(last["data"]) == total - 10 * (pages - 1)
    past = ok(svc, f"/user-balances/{DEMO_WALLET}", f"page={pages + 5}")
    assert past["data"] == []
    assert past["meta"] == {"has_more": False, "page": pages + 5, "per_page": 10, "total": total, "total_pages": pages}
    # page 0 is page 1; limit 0 is the default
    assert ok(svc, f"/user-balances/{DEMO_WALLET}", "page=0") == first
    assert ok(svc, f"/user-balances/{DEMO_WALLET}", "page=1&limit=0") == first
    everything = ok(svc, f"/user-balances/{DEMO_WALLET}", "limit=1000")["data"]
    small = []
    for page in range(1, total // 3 + 2):
        small += ok(svc, f"/user-balances/{DEMO_WALLET}", f"page={page}&limit=3")["data"]
    assert small == everything


def test_pagination_on_yield_and_positions(svc):
    y = ok(svc, f"/user-yield/{DEMO_WALLET}", "page=2&limit=5")
    assert y["meta"]["page"] == 2 and y["meta"]["per_page"] == 5 and len(y["data"]) == 5
    p = ok(svc, f"/breeze-balances/{DEMO_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}&limit=2&page=2")
    assert len(p["data"]) == 2 and p["meta"]["has_more"] is True


# ---- query failures ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, expected",
    [
        ("page=abc", "page: invalid digit found in string"),
        ("page=-1", "page: invalid digit found in string"),
        ("limit=1.5", "limit: invalid digit found in string"),
        ("limit=2147483648", "limit: number too large to fit in target type"),
        ("page=99999999999999999999", "page: number too large to fit in target type"),
        ("page=", "page: cannot parse integer from empty string"),
        ("page=1&page=2", "duplicate field `page`"),
    ],
)
@pytest.mark.parametrize("endpoint", ["user-balances", "user-yield", "breeze-balances"])
def test_unparseable_query_is_plain_text(svc, endpoint, query, expected):
    if endpoint == "breeze-balances":
        query += f"&strategy_id={DEMO_STRATEGY_ID}"
    r = get(svc, f"/{endpoint}/{DEMO_WALLET}", query)
    assert r.status == 400
    assert r.content_type == PLAIN_TEXT == "text/plain; charset=utf-8"
    assert json.loads(r.body) == f"Failed to deserialize query string: {expected}"


def test_int32_max_is_accepted(svc):
    body = ok(svc, f"/user-yield/{DEMO_WALLET}", "page=2147483647&limit=2147483647")
    assert body["data"] == [] and body["meta"]["per_page"] == 2147483647


@pytest.mark.parametrize("endpoint", ["user-balances", "breeze-balances"])
def test_bad_sort_order_is_plain_text(svc, endpoint):
    r = get(svc, f"/{endpoint}/{DEMO_WALLET}", f"sort_order=up&strategy_id={DEMO_STRATEGY_ID}")
    assert r.status == 400 and r.content_type == PLAIN_TEXT
    message = json.loads(r.body)
    assert message.startswith("Failed to deserialize query string: sort_order")
    assert "`up`" in message


def test_unknown_query_fields_are_ignored(svc):
    assert ok(svc, f"/user-yield/{DEMO_WALLET}", "foo=bar&page=1")["meta"]["page"] == 1


# ---- filters and sorting -------------------------------------------------------------------------


def test_asset_filter(svc):
    body = ok(svc, f"/user-balances/{DEMO_WALLET}", f"asset={USDC}")
    assert [b["token_address"] for b in body["data"]] == [USDC]
    body = ok(svc, f"/breeze-balances/{DEMO_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}&asset={USDC}")
    assert [p["token_address"] for p in body["data"]] == [USDC]
    # "filter by asset symbol or mint address", as the service documents it: any case
    for symbol in ("USDC", "usdc"):
        body = ok(svc, f"/breeze-balances/{DEMO_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}&asset={symbol}")
        assert [p["token_address"] for p in body["data"]] == [USDC]
        assert [b["token_address"] for b in ok(svc, f"/user-balances/{DEMO_WALLET}", f"asset={symbol}")["data"]] == [
            USDC
        ]
    assert ok(svc, f"/user-balances/{DEMO_WALLET}", "asset=NOSUCHTOKEN")["data"] == []


def test_methods_the_service_does_not_serve(svc):
    assert svc.handle("TRACE", "/health").json() == {"message": "Missing credentials"}
    answer = svc.handle("QUERY", "/health", headers={"x-api-key": KEY})
    assert answer.status == 405 and "message" in answer.json() and answer.headers["Allow"] == "GET, HEAD, POST"


def test_sorting(svc):
    q = f"strategy_id={DEMO_STRATEGY_ID}&limit=100"
    desc = ok(svc, f"/breeze-balances/{DEMO_WALLET}", q + "&sort_by=balance&sort_order=desc")["data"]
    values = [p["total_position_value"] for p in desc]
    assert values == sorted(values, reverse=True)
    asc = ok(svc, f"/breeze-balances/{DEMO_WALLET}", q + "&sort_by=balance&sort_order=asc")["data"]
    assert [p["total_position_value"] for p in asc] == sorted(values)
    by_apy = ok(svc, f"/breeze-balances/{DEMO_WALLET}", q + "&sort_by=apy&sort_order=asc")["data"]
    assert [p["apy"] for p in by_apy] == sorted(p["apy"] for p in desc)
    bal = ok(svc, f"/user-balances/{DEMO_WALLET}", "limit=100&sort_by=total_balance&sort_order=asc")["data"]
    assert [b["total_balance"] for b in bal] == sorted(b["total_balance"] for b in bal)
    bal2 = ok(svc, f"/user-balances/{DEMO_WALLET}", "limit=100&sort_by=balance")["data"]
    assert [b["total_balance"] for b in bal2] == sorted((b["total_balance"] for b in bal), reverse=True)
    # paging keeps the order
    page2 = ok(svc, f"/user-balances/{DEMO_WALLET}", "limit=5&page=2&sort_by=balance")["data"]
    assert page2 == bal2[5:10]


@pytest.mark.parametrize("sort_by", ["token_symbol", "nope"])
def test_unknown_sort_by(svc, sort_by):
    r = get(svc, f"/user-balances/{DEMO_WALLET}", f"sort_by={sort_by}")
    assert r.status == 400 and r.content_type == "application/json"
    assert sort_by in r.json()["message"]
    r = get(svc, f"/breeze-balances/{DEMO_WALLET}", f"sort_by={sort_by}&strategy_id={DEMO_STRATEGY_ID}")
    assert r.status == 400 and sort_by in r.json()["message"]


# ---- exact integers ------------------------------------------------------------------------------


def test_u128_amounts_are_exact(svc):
    body = ok(svc, f"/breeze-balances/{WHALE_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}")
    values = [p["total_position_value"] for p in body["data"]]
    assert all(v > 2**64 for v in values)
    usdc = next(p for p in body["data"] if p["token_address"] == USDC)
    assert usdc["total_position_value"] == 3 * 2**64 + 987_654_321_012
    assert usdc["yield_earned"] == 987_654_321_012 - 123_456_789
    raw = get(svc, f"/breeze-balances/{WHALE_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}").body
    assert str(3 * 2**64 + 987_654_321_012).encode() in raw
    bal = ok(svc, f"/user-balances/{WHALE_WALLET}", f"asset={USDC}")["data"][0]
    assert bal["total_balance"] == 2**100 + 7 + 3 * 2**64 + 987_654_321_012
    assert bal["yield_balance"]["funds"] == str(3 * 2**64 + 987_654_321_012)
    yields = ok(svc, f"/user-yield/{WHALE_WALLET}")["data"]
    assert all(y["position_value"] > 2**64 for y in yields)


# ---- ledger --------------------------------------------------------------------------------------


def test_state_file_is_created_and_shared_between_instances(state):
    assert not state.exists()
    a = Ledger(state)
    assert state.exists()
    assert json.loads(state.read_text())["format"] == "yieldcli-sandbox-ledger"
    a.sync_wallet(DEMO_WALLET, positions=[(DEMO_STRATEGY_ID, JLP, 5_000_000, 5_000_000)])
    b = Ledger(state)
    svc_b = Service(b, KEY)
    pos = ok(svc_b, f"/breeze-balances/{DEMO_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}&asset={JLP}")["data"]
    assert pos[0]["total_deposited_value"] == 5_000_000
    # a change through `b` is seen by `a` too (it reloads when the file was replaced)
    b.sync_wallet(DEMO_WALLET, positions=[(DEMO_STRATEGY_ID, JLP, 5_000_001, 5_000_001)])
    again = a.positions(DEMO_WALLET, DEMO_STRATEGY_ID, JLP).all()
    assert again[0]["total_deposited_value"] == 5_000_001
    assert not list(state.parent.glob("*.tmp"))


def test_u128_survives_the_file(state):
    Ledger(state)
    c = Ledger(state)
    assert c.wallet_tokens(WHALE_WALLET)[USDC] == 2**100 + 7


def test_reset(state):
    a = Ledger(state)
    before = state.read_text()
    a.sync_wallet(DEMO_WALLET, {USDC: 1})
    assert state.read_text() != before
    a.reset()
    assert state.read_text() == before
    Ledger(state).reset()
    assert json.loads(state.read_text()) == json.loads(before)


def test_corrupt_state_file_is_a_clear_error(state):
    state.parent.mkdir(parents=True)
    state.write_text("{nope")
    with pytest.raises(LedgerError, match="not valid JSON"):
        Ledger(state)
    state.write_text('{"format": "yieldcli-sandbox-ledger", "version": 999}')
    with pytest.raises(LedgerError, match="version"):
        Ledger(state)


def test_sync_wallet_follows_the_chain(state):
    led = Ledger(state, now=lambda: "2030-01-01T00:00:00+00:00")
    before = led.positions(DEMO_WALLET, DEMO_STRATEGY_ID, USDC).all()[0]
    value, deposited = before["total_position_value"], before["total_deposited_value"]
    # a deposit: the position account on chain records 1 USDC more, deposited and value alike
    led.sync_wallet(DEMO_WALLET, {USDC: 5}, [(DEMO_STRATEGY_ID, USDC, value + 1_000_000, deposited + 1_000_000)])
    item = led.positions(DEMO_WALLET, DEMO_STRATEGY_ID, USDC).all()[0]
    assert item["total_deposited_value"] == deposited + 1_000_000
    assert item["total_position_value"] == value + 1_000_000
    assert item["yield_earned"] == before["yield_earned"]
    assert item["last_updated"] == "2030-01-01T00:00:00+00:00"
    assert led.wallet_tokens(DEMO_WALLET)[USDC] == 5
    # the ledger takes the chain's figures as they are
    led.sync_wallet(DEMO_WALLET, positions=[(DEMO_STRATEGY_ID, USDC, 7_000, 6_000)])
    after = led.positions(DEMO_WALLET, DEMO_STRATEGY_ID, USDC).all()[0]
    assert (after["total_position_value"], after["total_deposited_value"], after["yield_earned"]) == (
        7_000,
        6_000,
        1_000,
    )
    # a closed fund account ends the position; the change is in the file
    led.sync_wallet(DEMO_WALLET, positions=[(DEMO_STRATEGY_ID, USDC, None, 0)])
    assert led.positions(DEMO_WALLET, DEMO_STRATEGY_ID, USDC).all() == []
    assert Ledger(state).positions(DEMO_WALLET, DEMO_STRATEGY_ID, USDC).all() == []
    # a new wallet gets a new position, with entry date now
    led.sync_wallet(UNKNOWN_WALLET, positions=[(SECOND_STRATEGY_ID, USDC, 7, 7)])
    y = led.yield_records(UNKNOWN_WALLET).all()
    assert len(y) == 1 and y[0]["position_value"] == 7 and y[0]["entry_date"].startswith("2030")
    with pytest.raises(LedgerError, match="Strategy not found"):
        led.sync_wallet(DEMO_WALLET, positions=[("nope", USDC, 1, 1)])
    with pytest.raises(LedgerError, match="does not support"):
        led.sync_wallet(DEMO_WALLET, positions=[(SECOND_STRATEGY_ID, by_symbol("mSOL").mint, 1, 1)])


def test_ledgers_in_parallel_processes_lose_no_change(state):
    """Each process adds to its own wallet 20 times at once with the others: every change is in the file."""
    Ledger(state)
    code = (
        "import sys; from yieldcli.sandbox.ledger import Ledger\n"
        "led = Ledger(sys.argv[1]); w = sys.argv[2]\n"
        "for i in range(1, 21): led.sync_wallet(w, {sys.argv[3]: i})\n"
    )
    wallets = seeded_wallet_addresses(4)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(state), w, USDC]) for w in wallets]
    assert [proc.wait(timeout=120) for proc in procs] == [0] * 4
    final = Ledger(state)
    assert [final.wallet_tokens(w).get(USDC) for w in wallets] == [20] * 4
    assert not list(state.parent.glob("*.tmp"))


# ---- seeds ---------------------------------------------------------------------------------------


def test_seed_positions(state):
    n = 100_000
    t0 = time.perf_counter()
    svc = Service(Ledger(state, seed_positions=n), KEY)
    body = ok(svc, f"/breeze-balances/{DEMO_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}")
    base = len(Ledger(state).positions(DEMO_WALLET, DEMO_STRATEGY_ID).all())
    assert body["meta"]["total"] == n + base
    assert body["meta"]["total_pages"] == -(-(n + base) // 10)
    last = ok(
        svc, f"/breeze-balances/{DEMO_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}&page={body['meta']['total_pages']}"
    )
    assert last["data"] and last["meta"]["has_more"] is False
    assert ok(svc, f"/user-balances/{DEMO_WALLET}")["meta"]["total"] > n
    assert ok(svc, f"/user-yield/{DEMO_WALLET}")["meta"]["total"] > n
    # filters find one synthetic item without scanning
    mint = demo.synthetic_mint(4242)
    one = ok(svc, f"/user-balances/{DEMO_WALLET}", f"asset={mint}")["data"]
    assert [b["token_address"] for b in one] == [mint] and one[0]["token_symbol"] == "SYN4242"
    fund = demo.synthetic_fund_id(77)
    assert [y["fund_id"] for y in ok(svc, f"/user-yield/{DEMO_WALLET}", f"fund_id={fund}")["data"]] == [fund]
    # sorting covers synthetic items too
    top = ok(svc, f"/breeze-balances/{DEMO_WALLET}", f"strategy_id={DEMO_STRATEGY_ID}&sort_by=balance&limit=3")["data"]
    assert top[0]["total_position_value"] >= top[1]["total_position_value"] >= top[2]["total_position_value"]
    assert time.perf_counter() - t0 < 30  # loose: nothing is materialised per item
    # the synthetic data never reaches the file
    assert state.stat().st_size < 100_000
    assert "SYN" not in state.read_text()
    # other wallets and strategies are unaffected
    assert ok(svc, f"/user-yield/{WHALE_WALLET}")["meta"]["total"] < 10


def test_seed_wallets(state):
    led = Ledger(state, seed_wallets=20)
    svc = Service(led, KEY)
    addrs = seeded_wallet_addresses(20)
    for addr in addrs[:3] + addrs[-1:]:
        bal = ok(svc, f"/user-balances/{addr}")
        assert bal["meta"]["total"] >= 3
        pos = ok(svc, f"/breeze-balances/{addr}", f"strategy_id={DEMO_STRATEGY_ID}")
        assert pos["meta"]["total"] >= 2
        assert ok(svc, f"/user-yield/{addr}")["meta"]["total"] == pos["meta"]["total"]
    beyond = seeded_wallet_addresses(21)[-1]
    assert ok(svc, f"/user-balances/{beyond}")["meta"]["total"] == 0
    # a change to a seeded wallet keeps its seeded data and is stored
    before = led.positions(addrs[0], DEMO_STRATEGY_ID, USDC).all()[0]["total_position_value"]
    led.sync_wallet(addrs[0], positions=[(DEMO_STRATEGY_ID, USDC, before + 3, before)])
    again = Ledger(state).positions(addrs[0], DEMO_STRATEGY_ID, USDC).all()[0]
    assert again["total_position_value"] == before + 3


# ---- latency -------------------------------------------------------------------------------------


def test_latency_is_applied_to_every_response(state):
    slept: list[float] = []
    svc = Service(Ledger(state), KEY, latency_ms=250, sleep=slept.append)
    get(svc, "/health")
    get(svc, "/health", key=None)
    assert slept == [0.25, 0.25]


def test_latency_with_real_sleep_has_a_lower_bound(state):
    svc = Service(Ledger(state), KEY, latency_ms=50)
    t0 = time.perf_counter()
    get(svc, "/health")
    assert time.perf_counter() - t0 >= 0.045


# ---- faults --------------------------------------------------------------------------------------


def test_fault_injection(svc):
    svc.faults.add(
        "GET",
        r"^/user-balances/",
        503,
        b"<html>bad gateway</html>",
        content_type="text/html",
        headers={"Retry-After": "2"},
        times=2,
    )
    for _ in range(2):
        r = get(svc, f"/user-balances/{DEMO_WALLET}")
        assert (r.status, r.content_type, r.body, r.headers) == (
            503,
            "text/html",
            b"<html>bad gateway</html>",
            {"Retry-After": "2"},
        )
    assert get(svc, f"/user-balances/{DEMO_WALLET}").status == 200
    assert len(svc.faults) == 0


def test_fault_matches_method_and_path_and_runs_forever(svc):
    fault = svc.add_fault("*", "/health", 429, '{"message":"slow down"}', times=None)
    assert get(svc, f"/strategy-info/{DEMO_STRATEGY_ID}").status == 200
    for _ in range(3):
        assert get(svc, "/health").status == 429
    assert fault.hits == 3
    svc.faults.clear()
    assert get(svc, "/health").status == 200
    svc.add_fault("POST", "/health", 500, b"")
    assert get(svc, "/health").status == 200  # GET does not match a POST fault


def test_fault_answers_before_auth_and_can_be_slow(state):
    slept: list[float] = []
    svc = Service(Ledger(state), KEY, sleep=slept.append)
    svc.faults.add("GET", "/health", 200, b'{"data": [', delay_s=1.5)
    r = get(svc, "/health", key=None)
    assert (r.status, r.body) == (200, b'{"data": [')
    assert slept == [1.5]
    with pytest.raises(ValueError):
        svc.faults.add("GET", "/health", 200, b"", times=0)


# ---- POST endpoints (write side not in this sandbox yet) -----------------------------------------


@pytest.mark.parametrize(
    "path, params, message",
    [
        (
            "/deposit/tx",
            {"base_asset": USDC, "amount": 1, "user_key": DEMO_WALLET},
            "strategy_id must be provided for deposit",
        ),
        ("/deposit/ix", {"strategy_id": None}, "strategy_id must be provided for deposit"),
        ("/withdraw/tx", {"all": True}, "Strategy id must be provided"),
        ("/withdraw/ix", {}, "Strategy id must be provided"),
        (
            "/close-user-account/tx",
            {"user_pubkey": DEMO_WALLET, "mint": USDC},
            "Either user_account or user_pubkey + strategy_id + mint must be provided",
        ),
        ("/close-user-account/ix", {}, "Either user_account or user_pubkey + strategy_id + mint must be provided"),
    ],
)
def test_documented_post_errors(svc, path, params, message):
    r = post(svc, path, {"params": params})
    assert (r.status, r.json()) == (400, {"message": message})


@pytest.mark.parametrize("path", ["/deposit/tx", "/deposit/ix", "/withdraw/tx", "/withdraw/ix"])
def test_post_is_not_implemented_yet(svc, path):
    r = post(
        svc,
        path,
        {
            "params": {
                "strategy_id": DEMO_STRATEGY_ID,
                "base_asset": USDC,
                "amount": 5,
                "user_key": DEMO_WALLET,
                "payer_key": DEMO_WALLET,
            }
        },
    )
    assert (r.status, r.json()) == (501, {"message": "Not implemented in this sandbox yet"})


def test_post_body_shape_is_checked(svc):
    assert post(svc, "/deposit/tx", b"{nope").status == 400
    assert "params" in post(svc, "/deposit/tx", {"nope": 1}).json()["message"]
    assert post(svc, "/deposit/tx", {"params": []}).status == 400
    r = post(svc, "/deposit/tx", {"params": {"strategy_id": DEMO_STRATEGY_ID, "amount": "5"}})
    assert r.status == 400 and "amount" in r.json()["message"]
    r = post(svc, "/deposit/tx", {"params": {"strategy_id": DEMO_STRATEGY_ID, "amount": 2**64}})
    assert r.status == 400 and "u64" in r.json()["message"]
    assert post(svc, "/deposit/tx", {"params": {}}, content_type="text/plain").status == 415
    r = post(svc, "/close-user-account/ix", {"params": {"user_account": DEMO_WALLET}})
    assert r.status == 501


def test_post_handlers_hook(svc):
    seen = []

    def deposit_tx(params):
        seen.append(params)
        return json_response(200, "AQID")

    svc.post_handlers["/deposit/tx"] = deposit_tx
    r = post(svc, "/deposit/tx", {"params": {"strategy_id": DEMO_STRATEGY_ID, "amount": 2**63}})
    assert (r.status, r.json()) == (200, "AQID")
    assert seen == [{"strategy_id": DEMO_STRATEGY_ID, "amount": 2**63}]

    def failing(params):
        raise LedgerError("no position")

    svc.post_handlers["/withdraw/tx"] = failing
    assert post(svc, "/withdraw/tx", {"params": {"strategy_id": "x"}}).json() == {"message": "no position"}

    def buggy(params):
        raise RuntimeError("boom")

    svc.post_handlers["/withdraw/ix"] = buggy
    r = post(svc, "/withdraw/ix", {"params": {"strategy_id": "x"}})
    assert (r.status, r.json()) == (500, {"message": "Internal server error"})


# ---- the HTTP server -----------------------------------------------------------------------------


def _request(
    conn: http.client.HTTPConnection,
    path: str,
    key: str | None,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict | None = None,
):
    h = dict(headers or {})
    if key is not None:
        h["x-api-key"] = key
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    return r, r.read()


def test_server_over_loopback(state):
    with SandboxServer(state, api_key=KEY) as server:
        assert server.url == f"http://127.0.0.1:{server.port}" and server.api_key == KEY
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        r, body = _request(conn, "/health", KEY)
        assert (r.status, body, r.getheader("Content-Length")) == (200, b'"OK"', "4")
        # keep-alive: the same connection serves the next requests
        sock = conn.sock
        r, body = _request(conn, f"/user-balances/{DEMO_WALLET}?page=2&limit=3", KEY)
        assert r.status == 200 and json.loads(body)["meta"]["page"] == 2
        assert conn.sock is sock
        r, body = _request(conn, "/health", None)
        assert (r.status, json.loads(body)) == (401, {"message": "Missing credentials"})
        r, body = _request(conn, "/user-yield/x?page=abc", KEY)
        assert r.status == 400 and r.getheader("Content-Type") == "text/plain; charset=utf-8"
        r, body = _request(
            conn, "/deposit/tx", KEY, "POST", b'{"params":{"strategy_id":"s"}}', {"Content-Type": "application/json"}
        )
        assert (r.status, json.loads(body)) == (400, {"message": "Strategy not found"})
        r, body = _request(conn, "/health", KEY, "HEAD")
        assert r.status == 200 and body == b""
        assert conn.sock is sock
        conn.close()


def test_server_generates_a_key_and_is_quiet(state, capfd):
    server = SandboxServer(state).start()
    try:
        assert len(server.api_key) >= 20
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        assert _request(conn, "/health", server.api_key)[0].status == 200
        assert _request(conn, "/health", KEY)[0].status == 401
    finally:
        server.stop()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_server_survives_malformed_requests(state, capfd):
    import socket

    with SandboxServer(state, api_key=KEY) as server:
        for junk in (
            b"garbage\r\n\r\n",
            b"GET / HTTP/9.9\r\n\r\n",
            b"\x00\xff\r\n\r\n",
            b"POST /deposit/tx HTTP/1.1\r\nContent-Length: nope\r\n\r\n",
        ):
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
                s.sendall(junk)
                s.recv(4096)
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nx-api-key: " + KEY.encode() + b"\r\n")
            s.close()  # hang up mid-request
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        r, body = _request(conn, "/health", KEY)
        assert (r.status, body) == (200, b'"OK"')
    assert capfd.readouterr().err == ""


def test_server_faults_over_http(state):
    with SandboxServer(state, api_key=KEY) as server:
        server.add_fault("GET", "/health", 429, b'{"message":"Too many requests"}', headers={"Retry-After": "1"})
        server.add_fault("GET", "/strategy-info/", 200, b'{"strategy_id": "trunc')
        server.add_fault("GET", "/user-yield/", 0, b"", disconnect=True)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        r, body = _request(conn, "/health", KEY)
        assert (r.status, r.getheader("Retry-After")) == (429, "1")
        r, body = _request(conn, f"/strategy-info/{DEMO_STRATEGY_ID}", KEY)
        assert body == b'{"strategy_id": "trunc' and r.getheader("Content-Length") == str(len(body))
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            _request(conn, f"/user-yield/{DEMO_WALLET}", KEY)
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        assert _request(conn, "/health", KEY)[0].status == 200


def test_server_latency_does_not_block_other_requests(state):
    with SandboxServer(state, api_key=KEY, latency_ms=300) as server:
        results: list[float] = []

        def one() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            t = time.perf_counter()
            assert _request(conn, "/health", KEY)[0].status == 200
            results.append(time.perf_counter() - t)

        threads = [threading.Thread(target=one) for _ in range(4)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        assert len(results) == 4 and min(results) >= 0.29
        assert elapsed < 4 * 0.3  # concurrent, not one after another


def test_server_refuses_non_loopback_hosts(state):
    with pytest.raises(ValueError, match="loopback"):
        SandboxServer(state, host="0.0.0.0")
    server = SandboxServer(state, host="localhost")
    assert server.url.startswith("http://localhost:")
    server.stop()


def test_server_seeds_and_stop(state):
    server = SandboxServer(state, api_key=KEY, seed_positions=25, seed_wallets=3).start()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    r, body = _request(conn, f"/user-yield/{DEMO_WALLET}", KEY)
    assert json.loads(body)["meta"]["total"] > 25
    r, body = _request(conn, f"/user-balances/{seeded_wallet_addresses(3)[2]}", KEY)
    assert json.loads(body)["meta"]["total"] >= 3
    server.stop()
    server.stop()
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        fresh = http.client.HTTPConnection("127.0.0.1", server.port, timeout=2)
        _request(fresh, "/health", KEY)


def test_serve_forever_in_foreground_stops_from_another_thread(state):
    server = SandboxServer(state, api_key=KEY)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    assert _request(conn, "/health", KEY)[0].status == 200
    server.stop()
    thread.join(timeout=5)
    assert not thread.is_alive()
