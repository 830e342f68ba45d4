"""Operators at scale: concurrent --all in page order, streaming output, and failures that name their page."""

import json
import os
import subprocess

import pytest

from tests.conftest import TEST_API_KEY, YIELD
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET


@pytest.fixture
def big(tmp_path):
    from yieldcli.sandbox.server import SandboxServer

    server = SandboxServer(tmp_path / "big" / "state.json", api_key=TEST_API_KEY, seed_positions=500).start()
    yield server
    server.stop()


def env_for(server):
    return {"YIELD_API_URL": server.url, "YIELD_API_KEY": TEST_API_KEY, "YIELD_STRATEGY": DEMO_STRATEGY_ID}


def service_items(server, page_size):
    items, page = [], 1
    while True:
        body = server.service.handle("GET", f"/breeze-balances/{DEMO_WALLET}",
                                     f"strategy_id={DEMO_STRATEGY_ID}&page={page}&limit={page_size}",
                                     {"x-api-key": TEST_API_KEY}, b"").json()
        items += body["data"]
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
    proc = subprocess.Popen([YIELD, "positions", DEMO_WALLET, "--all", "--limit", "20", "--concurrency", "2", "-o", "ndjson"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **env_for(big)})
    try:
        first = proc.stdout.readline()
        assert json.loads(first)["strategy_id"] == DEMO_STRATEGY_ID
        assert proc.poll() is None  # still waiting for the last page, yet items are out
    finally:
        release.set()
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert len(out.splitlines()) + 1 == 507


def test_csv_streams_with_one_header(run, big):
    result = run("positions", DEMO_WALLET, "--all", "-o", "csv", env=env_for(big))
    lines = result.stdout.splitlines()
    assert result.code == 0 and lines[0].startswith("apy,decimals") and len(lines) == 508
