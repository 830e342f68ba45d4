"""Tokens learned from the chain's metadata: a learned symbol names its mint everywhere the built-in ones
do, and never takes a built-in symbol, another learned mint's symbol, or a shape a symbol does not have."""

from __future__ import annotations

import pytest

from yieldcli import tokens
from yieldcli.errors import UsageError

SDX = "J3N4o2hND6ab5ToVqLK8sJUufUBgBcSZnc4Ra1Nfv5ep"
SBOND = "7qXBsLq8zgvJ7hQWjb5nu5cPBMZYi4DY9MPvYFbk9hco"


def test_a_learned_symbol_is_known_as_the_built_in_ones_are():
    with pytest.raises(UsageError):
        tokens.resolve_asset("sdx")
    learned = tokens.learn(SDX, "SDX\x00\x00", "Sandbox Dollar\x00", 6)
    assert learned == tokens.Token("SDX", SDX, 6, "Sandbox Dollar")
    assert tokens.resolve_asset("sdx") == SDX and tokens.by_mint(SDX) == learned
    assert "SDX" in tokens.symbols()
    tokens.forget_learned()
    assert tokens.by_mint(SDX) is None


@pytest.mark.parametrize("symbol", ["USDC", "usdc", "WSOL", "PYUSD"])
def test_a_token_calling_itself_by_a_built_in_symbol_is_not_learned(symbol):
    assert tokens.learn(SDX, symbol, "USD Coin", 6) is None
    assert tokens.by_mint(SDX) is None and tokens.by_symbol(symbol).mint != SDX


def test_a_symbol_learned_for_one_mint_is_not_taken_by_another():
    assert tokens.learn(SDX, "SDX", "Sandbox Dollar", 6) is not None
    assert tokens.learn(SBOND, "sdx", "Another", 6) is None
    assert tokens.resolve_asset("SDX") == SDX and tokens.by_mint(SBOND) is None


@pytest.mark.parametrize("symbol", ["", "S DX", "USDС", "SDX\n", "-SDX", "A" * 13, "S\u202eDX"])  # Cyrillic С
def test_a_symbol_of_another_shape_is_not_learned(symbol):
    assert tokens.learn(SDX, symbol, "Sandbox Dollar", 6) is None


def test_a_name_of_another_shape_is_replaced_by_the_symbol():
    assert tokens.learn(SDX, "SDX", "Sandbox\u202eDollar", 6).name == "SDX"
