"""Read commands, driven as users run them, against the sandbox served over loopback."""

import csv
import io
import json
import shutil
import subprocess

import pytest

from yieldcli.cli.render.amount_fields import adder
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET, WHALE_WALLET

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
ALL_MODES = ("table", "json", "ndjson", "csv")

READS = {
    "positions": ["positions", DEMO_WALLET, "--strategy", DEMO_STRATEGY_ID],
    "balances": ["balances", DEMO_WALLET],
    "earnings": ["earnings", DEMO_WALLET],
}


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("kind", sorted(READS))
def test_paginated_reads_in_every_mode(api, sandbox, kind, mode):
    result = api(*READS[kind], "--limit", "3", "-o", mode)
    assert result.code == 0, result.stderr
    if mode == "json":
        body = result.json()
        assert set(body) == {"data", "meta"}
        assert body["meta"]["page"] == 1 and body["meta"]["has_more"] is True
        assert len(body["data"]) == body["meta"]["per_page"] == 3
    elif mode == "ndjson":
        lines = result.stdout.splitlines()
        assert len(lines) == 3 and all(isinstance(json.loads(line), dict) for line in lines)
    elif mode == "csv":
        rows = list(csv.reader(io.StringIO(result.stdout)))
        assert len(rows) == 4 and all(len(r) == len(rows[0]) for r in rows)
    else:
        assert "APY (variable)" in result.stdout
        assert "use --all" in result.stdout  # more pages exist


def test_positions_table_shows_decimals_adjusted_amounts(api):
    result = api(*READS["positions"], "-o", "table", "--asset", "USDC")
    assert result.code == 0, result.stderr
    # 2,500,000,000 base units of a 6-decimals token
    assert "2,500.00" in result.stdout and "USDC" in result.stdout
    assert "not guaranteed" in result.stdout


def test_balances_table_shows_wallet_and_position_parts(api):
    body = api(*READS["balances"], "--asset", "USDC", "-o", "json").json()
    item = body["data"][0]
    funds = int(item["yield_balance"]["funds"])
    table = api(*READS["balances"], "--asset", "USDC", "-o", "table").stdout
    from yieldcli.amounts import format_units

    assert format_units(item["total_balance"] - funds, 6) in table
    assert format_units(funds, 6) in table
    assert "Wallet" in table and "In position" in table


@pytest.mark.parametrize("kind", sorted(READS))
def test_all_returns_every_item_with_meta_of_the_whole_set(api, kind):
    first = api(*READS[kind], "--limit", "3", "-o", "json").json()
    total = first["meta"]["total"]
    assert first["meta"]["total_pages"] > 1
    everything = api(*READS[kind], "--limit", "3", "--all", "-o", "json").json()
    assert len(everything["data"]) == total
    assert everything["meta"] == {"has_more": False, "page": 1, "per_page": total, "total": total, "total_pages": 1}
    # the same items, in the service's order, as page-by-page fetching gives
    pages = []
    for page in range(1, first["meta"]["total_pages"] + 1):
        pages += api(*READS[kind], "--limit", "3", "--page", str(page), "-o", "json").json()["data"]
    assert everything["data"] == pages


def test_strategy_info_table_and_json(api):
    body = api("strategy", "info", DEMO_STRATEGY_ID, "-o", "json").json()
    assert body["strategy_id"] == DEMO_STRATEGY_ID and USDC in body["assets"]
    table = api("strategy", "info", DEMO_STRATEGY_ID, "-o", "table").stdout
    assert "USDC" in table and "APY (variable)" in table


def test_strategy_defaults_from_env_then_profile(api, isolated):
    assert api("strategy", "info").code == 2  # none anywhere
    assert api("strategy", "info", env={"YIELD_STRATEGY": DEMO_STRATEGY_ID}).json()["strategy_id"] == DEMO_STRATEGY_ID
    assert api("config", "set", "strategy", DEMO_STRATEGY_ID).code == 0
    assert api("strategy", "info").json()["strategy_id"] == DEMO_STRATEGY_ID


def test_health(api):
    result = api("health", "-o", "json")
    assert result.code == 0 and result.json() == "OK"
    assert "OK" in api("health", "-o", "table").stdout


def test_exact_integers_beyond_u64(api, sandbox):
    body = api("balances", WHALE_WALLET, "--all", "-o", "json").json()
    expected = sandbox.service.handle(
        "GET", f"/user-balances/{WHALE_WALLET}", "limit=100", {"x-api-key": sandbox.api_key}, b""
    ).json()
    assert body["data"] == [adder("balances")(item) for item in expected["data"]]  # with the contract's twins
    assert any(item["total_balance"] > 2**64 for item in body["data"])
    # and the CSV/ndjson keep every digit too
    big = max(item["total_balance"] for item in body["data"])
    assert str(big) in api("balances", WHALE_WALLET, "--all", "-o", "csv").stdout
    assert str(big) in api("balances", WHALE_WALLET, "--all", "-o", "ndjson").stdout


def test_json_output_pipes_into_jq(api):
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    out = api(*READS["positions"], "-o", "json").stdout
    jq = subprocess.run(["jq", "-r", ".data[0].token_symbol"], input=out, capture_output=True, text=True, check=True)
    assert jq.stdout.strip() == json.loads(out)["data"][0]["token_symbol"]


def test_default_output_is_json_off_a_terminal(api):
    assert isinstance(api(*READS["balances"]).json()["data"], list)


# --- bad input: exit 2 before any request, naming the value -----------------------------------


@pytest.mark.parametrize(
    "args, named",
    [
        (["balances", "not-a-wallet"], "not-a-wallet"),
        (["balances", DEMO_WALLET + "x"], DEMO_WALLET + "x"),
        (["balances", DEMO_WALLET, "--page", "-1"], "-1"),
        (["balances", DEMO_WALLET, "--limit", str(2**31)], str(2**31)),
        (["balances", DEMO_WALLET, "--page", "two"], "two"),
        (["balances", DEMO_WALLET, "--order", "up"], "up"),
        (["balances", DEMO_WALLET, "-o", "yaml"], "yaml"),
        (["earnings", "0OIl"], "0OIl"),
    ],
)
def test_bad_input_is_refused_before_any_request(api, sandbox, args, named):
    # the service is down for this test: any request would be a different error
    sandbox.add_fault("*", ".*", 500, b'{"message":"should not be called"}', times=None)
    result = api(*args)
    assert result.code == 2, result.stderr
    assert named in result.stderr and result.stderr.startswith("error:")
    assert len(result.error_lines()) == 1


def test_no_wallet_and_no_keypair_is_a_clear_error(api):
    result = api("balances")
    assert result.code == 2 and "no wallet given" in result.stderr


def test_wallet_defaults_to_the_keypair_public_key(api, tmp_path):
    from yieldcli.sandbox.demo import demo_keypair

    keypair = tmp_path / "id.json"
    keypair.write_text(json.dumps(list(bytes(demo_keypair()))))
    result = api("balances", "--limit", "1", env={"YIELD_KEYPAIR": str(keypair)})
    assert result.code == 0, result.stderr
    # and from the Solana CLI config when yield has none of its own
    solana_cfg = tmp_path / "home" / ".config" / "solana" / "cli"
    solana_cfg.mkdir(parents=True)
    (solana_cfg / "config.yml").write_text(f"---\njson_rpc_url: http://127.0.0.1:8899\nkeypair_path: {keypair}\n")
    assert api("balances", "--limit", "1").code == 0
