"""Amounts a script can use: every record of JSON, NDJSON and CSV carries `decimals` and, beside each
base-unit amount (kept exact, as the service sent it), its token-unit value as exact decimal text under
`<name>_ui_amount_string`, the RPC's `uiAmountString` in this project's spelling. The library's models
and the agent server's read tools give the same names. `earnings -o csv` showed 16000000 for 16 USDC with
no decimals to scale it by."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import pytest

from tests.conftest import TEST_API_KEY
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET
from yieldcli.tokens import ui_amount_string

AMOUNTS = {
    "positions": ("total_deposited_value", "total_position_value", "yield_earned"),
    "balances": ("total_balance", "yield_balance.funds", "yield_balance.amount_of_yield"),
    "earnings": ("position_value", "yield_earned"),
}
ARGS = {"positions": ["--strategy", DEMO_STRATEGY_ID], "balances": [], "earnings": []}


def _get(record: dict, dotted: str):
    for part in dotted.split("."):
        record = record.get(part) if isinstance(record, dict) else None
    return record


def _check(kind: str, record: dict) -> None:
    """Each amount's twin is exactly the amount scaled by the record's decimals, as text."""
    decimals = record["decimals"]
    assert isinstance(decimals, int), record
    for name in AMOUNTS[kind]:
        raw = _get(record, name)
        outer, _, inner = name.rpartition(".")
        twin = _get(record, f"{outer}.{inner}_ui_amount_string" if outer else f"{inner}_ui_amount_string")
        if raw in (None, ""):
            assert twin in (None, ""), record
            continue
        assert Decimal(twin) == Decimal(int(raw)).scaleb(-decimals), (name, record)
        assert "e" not in twin.lower() and (("." not in twin) or not twin.endswith("0")), twin


@pytest.mark.parametrize("kind", sorted(AMOUNTS))
def test_json_ndjson_and_csv_records_carry_decimals_and_token_units(api, kind):
    command = [kind, DEMO_WALLET, *ARGS[kind], "--all"]
    as_json = api(*command, "-o", "json")
    assert as_json.code == 0, as_json.stderr
    records = as_json.json()["data"]
    assert records
    for record in records:
        _check(kind, record)
    lines = api(*command, "-o", "ndjson").stdout.splitlines()
    assert [json.loads(line) for line in lines] == records
    rows = list(csv.DictReader(io.StringIO(api(*command, "-o", "csv").stdout)))
    assert len(rows) == len(records)
    for row, record in zip(rows, records, strict=True):
        assert row["decimals"] == str(record["decimals"])
        for name in AMOUNTS[kind]:
            assert row[f"{name}_ui_amount_string"] == (_get(record, f"{name}_ui_amount_string") or "")
            assert row[name] == str(_get(record, name) if _get(record, name) is not None else "")


def test_earnings_as_csv_can_be_scaled_by_a_csv_reader(api):
    rows = list(csv.DictReader(io.StringIO(api("earnings", DEMO_WALLET, "--all", "-o", "csv").stdout)))
    usdc = next(row for row in rows if row["base_asset"] == "USDC")
    assert usdc["decimals"] == "6"
    assert Decimal(usdc["yield_earned_ui_amount_string"]) * 10**6 == int(usdc["yield_earned"])


def test_many_wallets_carry_them_too(api, tmp_path):
    wallets = tmp_path / "wallets.txt"
    wallets.write_text(f"{DEMO_WALLET}\n")
    lines = api("positions", "--wallets-file", str(wallets), "--strategy", DEMO_STRATEGY_ID, "-o", "ndjson").stdout
    for line in lines.splitlines():
        record = json.loads(line)
        assert record["wallet"] == DEMO_WALLET
        _check("positions", record)


def test_the_library_models_give_the_same_names(sandbox):
    from yieldcli import Client

    client = Client(api_url=sandbox.url, api_key=TEST_API_KEY, strategy=DEMO_STRATEGY_ID)
    position = next(iter(client.iter_positions(DEMO_WALLET)))
    assert position.total_position_value_ui_amount_string == ui_amount_string(
        position.total_position_value, position.decimals
    )
    record = next(r for r in client.iter_earnings(DEMO_WALLET) if r.base_asset == "USDC")
    assert record.decimals == 6
    assert Decimal(record.yield_earned_ui_amount_string) == Decimal(record.yield_earned).scaleb(-6)
    balance = next(b for b in client.iter_balances(DEMO_WALLET) if b.funds)
    assert balance.funds_ui_amount_string == ui_amount_string(balance.funds, balance.decimals)


@pytest.mark.parametrize(
    ("raw", "decimals", "text"),
    [
        (16_000_000, 6, "16"),
        (1_500_000, 6, "1.5"),
        (1, 9, "0.000000001"),
        (0, 6, "0"),
        (-5, 2, "-0.05"),
        (2**128 - 1, 6, "340282366920938463463374607431768.211455"),
        (42, 0, "42"),
    ],
)
def test_the_token_units_are_exact_text(raw, decimals, text):
    assert ui_amount_string(raw, decimals) == text
