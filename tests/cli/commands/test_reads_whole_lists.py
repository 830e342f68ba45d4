"""Scripts never lose a row: -o ndjson and -o csv hold every page unless a page is asked for, and
output that stops before the last page says so on stderr, in every format, with the flag for the rest."""

from __future__ import annotations

import csv
import io
import json

from yieldcli.sandbox.demo import DEMO_WALLET

# A wallet with no balances at all: its list is whole on page 1.
EMPTY_WALLET = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
MORE = "--all gets every page"


def test_ndjson_and_csv_hold_every_balance_with_nothing_on_stderr(api):
    ndjson = api("balances", DEMO_WALLET, "-o", "ndjson")
    rows = [json.loads(line) for line in ndjson.stdout.splitlines()]
    assert ndjson.code == 0 and len(rows) == 15 and ndjson.stderr == ""
    assert rows == api("balances", DEMO_WALLET, "--all", "-o", "json").json()["data"]
    table = api("balances", DEMO_WALLET, "-o", "csv")
    parsed = list(csv.DictReader(io.StringIO(table.stdout)))
    assert table.code == 0 and len(parsed) == 15 and table.stderr == ""
    assert [r["token_address"] for r in parsed] == [r["token_address"] for r in rows]


def test_a_page_asked_for_says_on_stderr_that_more_exist_in_every_format(api):
    for args in (["-o", "ndjson", "--limit", "5"], ["-o", "csv", "--page", "1"], ["-o", "json"], ["-o", "table"]):
        result = api("balances", DEMO_WALLET, *args)
        assert result.code == 0, (args, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and MORE in lines[0] and "--page 2" in lines[0], (args, result.stderr)
    # JSON keeps its page and the service's meta.
    body = api("balances", DEMO_WALLET, "-o", "json").json()
    assert len(body["data"]) == 10 and body["meta"]["has_more"] is True and body["meta"]["total"] == 15
    # The last page, or a list that fits on one, says nothing.
    assert api("balances", DEMO_WALLET, "-o", "json", "--page", "2").stderr == ""


def test_many_wallets_stream_every_page_and_a_cut_list_is_said_once(api, tmp_path):
    path = tmp_path / "w.txt"
    path.write_text(f"{DEMO_WALLET}\n{EMPTY_WALLET}\n")
    whole = api("balances", "--wallets-file", str(path), "-o", "ndjson")
    assert whole.code == 0 and whole.stderr == ""
    assert whole.stdout == api("balances", "--wallets-file", str(path), "--all", "-o", "ndjson").stdout
    assert len(whole.stdout.splitlines()) == 15
    cut = api("balances", "--wallets-file", str(path), "-o", "ndjson", "--page", "1")
    assert len(cut.stdout.splitlines()) == 10
    assert cut.stderr.splitlines() == [
        f"warning: 1 of 2 wallets have more balances than shown (first: {DEMO_WALLET}): {MORE}"
    ]
