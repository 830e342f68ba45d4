"""`positions -o csv` keeps what the JSON has: `fund_status` (Live, Paused, WithdrawOnly) was dropped."""

from __future__ import annotations

import csv
import io

from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET


def test_positions_csv_keeps_fund_status(api):
    command = ("positions", DEMO_WALLET, "--strategy", DEMO_STRATEGY_ID, "--all")
    records = api(*command, "-o", "json").json()["data"]
    rows = list(csv.DictReader(io.StringIO(api(*command, "-o", "csv").stdout)))
    assert records and [row["fund_status"] for row in rows] == [r.get("fund_status") or "" for r in records]
    assert any(row["fund_status"] for row in rows)
