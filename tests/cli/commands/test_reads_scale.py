"""Operators at scale: concurrent --all in page order, streaming output, and failures that name their page."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import TEST_API_KEY, YIELD, serve_sandbox
from yieldcli.cli.render.amount_fields import adder
from yieldcli.exact_json import _SEPARATOR
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET


@pytest.fixture
def big(tmp_path):
    server = serve_sandbox(tmp_path / "big", seed_positions=500)
    yield server
    server.stop()


def env_for(server):
    return {"YIELD_API_URL": server.url, "YIELD_API_KEY": TEST_API_KEY, "YIELD_STRATEGY": DEMO_STRATEGY_ID}


with_amounts = adder("positions")


def service_items(server, page_size):
    items, page = [], 1
    while True:
        body = server.service.handle(
            "GET",
            f"/breeze-balances/{DEMO_WALLET}",
            f"strategy_id={DEMO_STRATEGY_ID}&page={page}&limit={page_size}",
            {"x-api-key": TEST_API_KEY},
            b"",
        ).json()
        items += [with_amounts(item) for item in body["data"]]  # and the contract's decimals-scaled twins
        if not body["meta"]["has_more"]:
            return items
        page += 1


@pytest.mark.parametrize("mode", ["json", "ndjson"])
def test_concurrent_all_keeps_page_order(run, big, mode):
    big.latency_ms = 5
    result = run("positions", DEMO_WALLET, "--all", "--limit", "7", "--concurrency", "8", "-o", mode, env=env_for(big))
    assert result.code == 0, result.stderr
    got = result.json()["data"] if mode == "json" else [json.loads(line) for line in result.stdout.splitlines()]
    assert got == service_items(big, 7)
    assert len(got) == 507


def test_a_failing_page_fails_the_command_and_names_the_page(run, big):
    handle = big.service.handle

    def failing(method, path, query, headers, body):
        if "page=5&" in query + "&":
            from yieldcli.sandbox.service import error_response

            return error_response(500, "Internal server error")
        return handle(method, path, query, headers, body)

    big.service.handle = failing
    result = run("positions", DEMO_WALLET, "--all", "--limit", "20", "-o", "ndjson", env=env_for(big))
    assert result.code == 5
    assert "page 5 of" in result.stderr and "Internal server error" in result.stderr
    # what was written before the failure is never followed by a success exit
    assert len(result.stdout.splitlines()) <= 4 * 20


def test_ndjson_streams_items_before_the_last_page_arrives(big, isolated):
    handle = big.service.handle
    import threading

    release = threading.Event()

    def slow_last(method, path, query, headers, body):
        if "page=26&" in query + "&":
            release.wait(20)
        return handle(method, path, query, headers, body)

    big.service.handle = slow_last
    proc = subprocess.Popen(
        [YIELD, "positions", DEMO_WALLET, "--all", "--limit", "20", "--concurrency", "2", "-o", "ndjson"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env_for(big)},
    )
    try:
        first = proc.stdout.readline()
        assert json.loads(first)["strategy_id"] == DEMO_STRATEGY_ID
        assert proc.poll() is None  # still waiting for the last page, yet items are out
    finally:
        release.set()
        # read through the same buffered reader: communicate() would skip what readline() buffered
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.wait(timeout=60)
    assert proc.returncode == 0, err
    assert len(out.splitlines()) + 1 == 507


def wallets_file(tmp_path, lines):
    path = tmp_path / "wallets.txt"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def many(tmp_path):
    from yieldcli.sandbox.demo import seeded_wallet_addresses

    server = serve_sandbox(tmp_path / "many", seed_wallets=40)
    server.addresses = seeded_wallet_addresses(40)
    yield server
    server.stop()


@pytest.mark.parametrize("mode", ["ndjson", "csv", "json", "table"])
def test_wallets_file_queries_every_wallet_in_order(run, many, tmp_path, mode):
    path = wallets_file(tmp_path, ["# operators' wallets", "", *many.addresses[:30], "   "])
    result = run("balances", "--wallets-file", path, "--concurrency", "8", "-o", mode, env=env_for(many))
    assert result.code == 0, result.stderr
    if mode == "ndjson":
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        order = list(dict.fromkeys(r["wallet"] for r in rows))
        assert order == many.addresses[:30]
    elif mode == "csv":
        lines = result.stdout.splitlines()
        assert lines[0].startswith("wallet,decimals") and lines[1].split(",")[0] == many.addresses[0]
    elif mode == "json":
        body = result.json()
        assert body["meta"]["wallets"] == 30 and body["meta"]["failed"] == []
        assert body["data"][0]["wallet"] == many.addresses[0]
    else:
        assert all(address in result.stdout for address in many.addresses[:30])


def test_wallets_file_from_stdin(run, many):
    result = run(
        "earnings", "--wallets-file", "-", "-o", "ndjson", input="\n".join(many.addresses[:3]), env=env_for(many)
    )
    assert result.code == 0, result.stderr
    assert {json.loads(line)["wallet"] for line in result.stdout.splitlines()} <= set(many.addresses[:3])


def test_wallets_file_bad_lines_are_reported_with_line_numbers_before_any_request(run, many, tmp_path):
    many.add_fault("*", ".*", 500, b'{"message":"should not be called"}', times=None)
    path = wallets_file(tmp_path, [many.addresses[0], "not-a-wallet", "# fine", many.addresses[1] + "x"])
    result = run("balances", "--wallets-file", path, env=env_for(many))
    assert result.code == 2
    assert "line 2: 'not-a-wallet'" in result.stderr and "line 4:" in result.stderr
    assert result.stdout == ""


def test_one_failing_wallet_is_reported_and_the_others_complete(run, many, tmp_path):
    bad = many.addresses[3]
    many.add_fault("GET", f"/user-balances/{bad}$", 500, b'{"message":"Internal server error"}', times=None)
    path = wallets_file(tmp_path, many.addresses[:10])
    result = run("balances", "--wallets-file", path, "-o", "ndjson", env=env_for(many))
    assert result.code == 5
    # ndjson follows every page of each wallet, so the failure names its page too
    assert f"wallet {bad}: balances page 1: Internal server error" in result.stderr
    assert "1 of 10 wallets failed" in result.stderr
    seen = {json.loads(line)["wallet"] for line in result.stdout.splitlines()}
    assert bad not in seen and len(seen) >= 8


def test_csv_streams_with_one_header(run, big):
    result = run("positions", DEMO_WALLET, "--all", "-o", "csv", env=env_for(big))
    lines = result.stdout.splitlines()
    assert result.code == 0 and lines[0].startswith("apy,decimals") and len(lines) == 508


def imported_modules(args, env):
    """Top-level package names a cold `yield` run imports (python -X importtime, stderr)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "yieldcli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_a_json_read_imports_nothing_it_does_not_use(sandbox):
    env = {"YIELD_API_URL": sandbox.url, "YIELD_API_KEY": TEST_API_KEY}
    names = imported_modules(["strategy", "info", DEMO_STRATEGY_ID, "-o", "json"], env)
    assert "typer" in names  # the check itself works
    assert not names & {
        "solana",
        "solders",
        "keyring",
        "rich",
        "httpx",
        "httpx2",
        "httpcore",
        "httpcore2",
        "h2",
        "asyncio",
        "dataclasses",
    }


def test_version_imports_no_cli_framework():
    names = imported_modules(["--version"], {})
    assert "typer" not in names and "yieldcli" in names


# `positions --all -o ndjson` writes a page at a time: the bytes are still the stdlib's json.dumps of
# each item the service sent, and a malformed item still fails the command naming that item.

U128_MAX = 2**128 - 1


def one_page(items):
    meta = {"has_more": False, "page": 1, "per_page": len(items), "total": len(items), "total_pages": 1}
    return json.dumps({"data": items, "meta": meta}, ensure_ascii=False)


def positions_all(server, *extra):
    env = {**os.environ, **env_for(server), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [YIELD, "positions", DEMO_WALLET, "--all", "-o", "ndjson", *extra],
        capture_output=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def first_items(server):
    query = f"strategy_id={DEMO_STRATEGY_ID}&limit=30"
    return server.service.handle("GET", f"/breeze-balances/{DEMO_WALLET}", query, {"x-api-key": TEST_API_KEY}).json()[
        "data"
    ]


@pytest.mark.parametrize("many", [False, True])  # a small body (the stdlib reads it) and a large one (msgspec)
def test_a_page_of_odd_items_is_written_as_the_stdlib_writes_each(big, many):
    plain = first_items(big)
    odd = [
        {**plain[0], "total_position_value": U128_MAX, "token_name": 'Caf\u00e9 \u6f22 \U0001f600 \x01 \u2028 \\ "'},
        {**plain[1], "apy": 1e-05, "yield_earned": -U128_MAX},
        {**plain[2], "apy": 1e22, "tags": [1, _SEPARATOR, 2]},  # the page's separator inside an item
        {**plain[3], "apy": None, "token_symbol": _SEPARATOR, "extra": {"nested": [0.1, -0.0, 5e-324]}},
    ]
    items = odd + (plain[4:] if many else [])
    body = one_page(items)
    assert (len(body.encode()) > 4096) == many
    big.add_fault("GET", "^/breeze-balances/", 200, body, times=None)
    result = positions_all(big)
    assert result.returncode == 0, result.stderr.decode()
    items = [with_amounts(item) for item in json.loads(body)["data"]]
    expected = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
    assert result.stdout == expected.encode("utf-8")


def test_the_same_items_in_pages_of_fifty_are_the_stdlib_s_lines(big):
    result = positions_all(big, "--limit", "50", "--concurrency", "3")
    assert result.returncode == 0, result.stderr.decode()
    expected = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in service_items(big, 50))
    assert len(expected.splitlines()) > 5 * 50
    assert result.stdout == expected.encode("utf-8")


def test_a_malformed_item_in_a_page_fails_the_command_and_names_it(big):
    items = first_items(big)
    items[2] = {**items[2], "decimals": 300}
    big.add_fault("GET", "^/breeze-balances/", 200, one_page(items), times=None)
    result = positions_all(big)
    assert result.returncode == 5, result.stderr.decode()
    assert "position #3" in result.stderr.decode() and "decimals=300" in result.stderr.decode()
    assert result.stdout == b""  # nothing of a page that failed its check is written
