"""`positions --all -o ndjson` writes a page at a time: the bytes are still the stdlib's json.dumps of
each item the service sent, and a malformed item still fails the command naming that item."""

import json
import os
import subprocess

import pytest

from tests.conftest import TEST_API_KEY, YIELD
from yieldcli.exact_json import _SEPARATOR
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET

U128_MAX = 2**128 - 1


@pytest.fixture
def served(tmp_path):
    from yieldcli.sandbox.server import SandboxServer

    server = SandboxServer(tmp_path / "s" / "state.json", api_key=TEST_API_KEY, seed_positions=30).start()
    yield server
    server.stop()


def one_page(items):
    meta = {"has_more": False, "page": 1, "per_page": len(items), "total": len(items), "total_pages": 1}
    return json.dumps({"data": items, "meta": meta}, ensure_ascii=False)


def positions_all(server, *extra):
    env = {
        **os.environ,
        "YIELD_API_URL": server.url,
        "YIELD_API_KEY": TEST_API_KEY,
        "YIELD_STRATEGY": DEMO_STRATEGY_ID,
        "PYTHONIOENCODING": "utf-8",
    }
    return subprocess.run(
        [YIELD, "positions", DEMO_WALLET, "--all", "-o", "ndjson", *extra],
        capture_output=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def service_page(server, size=30, page=1):
    query = f"strategy_id={DEMO_STRATEGY_ID}&limit={size}&page={page}"
    return server.service.handle("GET", f"/breeze-balances/{DEMO_WALLET}", query, {"x-api-key": TEST_API_KEY}).json()


@pytest.mark.parametrize("many", [False, True])  # a small body (the stdlib reads it) and a large one (msgspec)
def test_a_page_of_odd_items_is_written_as_the_stdlib_writes_each(served, many):
    plain = service_page(served)["data"]
    odd = [
        {**plain[0], "total_position_value": U128_MAX, "token_name": 'Caf\u00e9 \u6f22 \U0001f600 \x01 \u2028 \\ "'},
        {**plain[1], "apy": 1e-05, "yield_earned": -U128_MAX},
        {**plain[2], "apy": 1e22, "tags": [1, _SEPARATOR, 2]},  # the page's separator inside an item
        {**plain[3], "apy": None, "token_symbol": _SEPARATOR, "extra": {"nested": [0.1, -0.0, 5e-324]}},
    ]
    items = odd + (plain[4:] if many else [])
    body = one_page(items)
    assert (len(body.encode()) > 4096) == many
    served.add_fault("GET", "^/breeze-balances/", 200, body, times=None)
    result = positions_all(served)
    assert result.returncode == 0, result.stderr.decode()
    expected = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in json.loads(body)["data"])
    assert result.stdout == expected.encode("utf-8")


def test_the_same_items_in_pages_of_seven_are_the_stdlib_s_lines(served):
    result = positions_all(served, "--limit", "7", "--concurrency", "3")
    assert result.returncode == 0, result.stderr.decode()
    pages = [service_page(served, 7, 1)]
    while pages[-1]["meta"]["has_more"]:
        pages.append(service_page(served, 7, len(pages) + 1))
    assert len(pages) > 3
    expected = "".join(json.dumps(item, ensure_ascii=False) + "\n" for page in pages for item in page["data"])
    assert result.stdout == expected.encode("utf-8")


def test_a_malformed_item_in_a_page_fails_the_command_and_names_it(served):
    items = service_page(served)["data"]
    items[2] = {**items[2], "decimals": 300}
    served.add_fault("GET", "^/breeze-balances/", 200, one_page(items), times=None)
    result = positions_all(served)
    assert result.returncode == 5, result.stderr.decode()
    assert "position #3" in result.stderr.decode() and "decimals=300" in result.stderr.decode()
    assert result.stdout == b""  # nothing of a page that failed its check is written
