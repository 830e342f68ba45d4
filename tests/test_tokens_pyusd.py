"""Every token the strategy lists is known by symbol everywhere: the listed Token-2022 asset (PYUSD, whose
mint the sandbox makes on Token-2022 at PYUSD's address) was "? unknown token" in `strategy info`, PYUSD in
`balances`, refused as `--asset PYUSD`, and left out of completion."""

from __future__ import annotations

from yieldcli import tokens
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET, PYUSD_MINT


def test_every_asset_the_strategy_lists_is_a_known_token(api):
    body = api("strategy", "info", DEMO_STRATEGY_ID, "-o", "json").json()
    assert PYUSD_MINT in body["assets"]
    assert all(tokens.by_mint(mint) is not None for mint in body["assets"]), body["assets"]
    table = api("strategy", "info", DEMO_STRATEGY_ID, "-o", "table", env={"COLUMNS": "100"}).stdout
    line = next(line for line in table.splitlines() if PYUSD_MINT in line)
    assert line.startswith("PYUSD") and "unknown" not in table, table


def test_asset_pyusd_reads_and_reviews_by_symbol(chain):
    balances = chain("balances", DEMO_WALLET, "--asset", "PYUSD", "-o", "json")
    assert balances.code == 0, balances.stderr
    assert [b["token_address"] for b in balances.json()["data"]] == [PYUSD_MINT]
    review = chain("deposit", "--asset", "pyusd", "--amount", "2.5", "-o", "json")
    assert review.code == 0, review.stderr
    assert "PYUSD" in review.stdout and "2.5" in review.stdout


def test_completion_offers_it(run):
    env = {"_YIELD_COMPLETE": "complete_bash", "COMP_WORDS": "yield\nbalances\n--asset\nPY", "COMP_CWORD": "3"}
    assert run(env=env).stdout.split() == ["PYUSD"]
