"""Nothing silent for a script: an asset or a fund that neither the token list nor the service knows is
exit 2 naming the known ones, for reads as for writes (`deposit --asset FOO` was already refused while
`balances --asset FOO` answered "no balances" with exit 0)."""

from __future__ import annotations

import pytest

from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET


@pytest.mark.parametrize(
    "command", [["balances", DEMO_WALLET], ["positions", DEMO_WALLET, "--strategy", DEMO_STRATEGY_ID]]
)
def test_an_unknown_asset_symbol_is_refused_with_the_known_ones(api, command):
    done = api(*command, "--asset", "FOO", "-o", "json")
    assert done.code == 2, done.stderr
    line = done.error_lines()[-1]
    assert "'FOO'" in line and "USDC" in line and "USDT" in line, line
    assert done.stdout == ""


def test_the_write_refuses_it_the_same_way(api):
    done = api("deposit", "--asset", "FOO", "--amount", "1", "-o", "json", env={"YIELD_STRATEGY": DEMO_STRATEGY_ID})
    assert done.code == 2 and "known symbols: USDC" in done.error_lines()[-1]


def test_known_symbols_and_mint_addresses_still_filter(api):
    by_symbol = api("balances", DEMO_WALLET, "--asset", "usdc", "-o", "json")
    assert by_symbol.code == 0, by_symbol.stderr
    assert {b["token_symbol"] for b in by_symbol.json()["data"]} == {"USDC"}
    mint = by_symbol.json()["data"][0]["token_address"]
    assert api("balances", DEMO_WALLET, "--asset", mint, "-o", "json").json()["data"] == by_symbol.json()["data"]


def test_an_unknown_fund_is_refused_with_the_wallets_funds(api):
    every = api("earnings", DEMO_WALLET, "--all", "-o", "json").json()["data"]
    assert every, "the demo wallet has earnings"
    done = api("earnings", DEMO_WALLET, "--fund", "nope", "-o", "json")
    assert done.code == 2, done.stderr
    line = done.error_lines()[-1]
    assert "'nope'" in line and all(record["fund_id"] in line for record in every), line
    one = every[0]["fund_id"]
    known = api("earnings", DEMO_WALLET, "--fund", one, "-o", "json")
    assert known.code == 0 and {r["fund_id"] for r in known.json()["data"]} == {one}
