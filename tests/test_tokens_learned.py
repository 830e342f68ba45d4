"""Tokens of the strategy that are not built in: a token's own metadata names it for showing (`learn`), and a
symbol the user gives names a mint only among the tokens just read (`resolve_asset(..., listed)`). Neither
takes a built-in symbol, one that reads as a built-in symbol, another learned mint's, or a shape a symbol
does not have."""

from __future__ import annotations

import pytest

from yieldcli import tokens
from yieldcli.errors import UsageError

SDX = "J3N4o2hND6ab5ToVqLK8sJUufUBgBcSZnc4Ra1Nfv5ep"
SBOND = "7qXBsLq8zgvJ7hQWjb5nu5cPBMZYi4DY9MPvYFbk9hco"


def test_a_learned_token_is_shown_by_its_symbol_and_a_listed_one_resolves():
    learned = tokens.learn(SDX, "SDX\x00\x00", "Sandbox Dollar\x00", 6)
    assert learned == tokens.Token("SDX", SDX, 6, "Sandbox Dollar")
    assert tokens.by_mint(SDX) == learned and tokens.by_symbol("sdx") == learned
    # Resolving a symbol takes the tokens just read, never what this process learned before.
    with pytest.raises(UsageError) as refused:
        tokens.resolve_asset("sdx")
    assert "SDX" not in refused.value.hint
    assert tokens.resolve_asset("sdx", listed=[learned]) == SDX
    with pytest.raises(UsageError) as typo:
        tokens.resolve_asset("sdxx", listed=[learned])
    assert typo.value.hint.endswith(", SDX")
    tokens.forget_learned()
    assert tokens.by_mint(SDX) is None


@pytest.mark.parametrize(
    "symbol", ["USDC", "usdc", "WSOL", "PYUSD", "U5DC", "USDC.", "JitoS0L", "jit0sol", "m-SOL", "$OL", "rnSOL", "VVSOL"]
)
def test_a_token_whose_symbol_reads_as_a_built_in_one_is_not_learned(symbol):
    assert tokens.candidate(SDX, symbol, "USD Coin", 6) is None
    assert tokens.learn(SDX, symbol, "USD Coin", 6) is None
    assert tokens.by_mint(SDX) is None


def test_a_symbol_learned_for_one_mint_is_not_taken_by_another_reading_alike():
    assert tokens.learn(SDX, "SDX", "Sandbox Dollar", 6) is not None
    assert tokens.learn(SBOND, "sdx", "Another", 6) is None
    assert tokens.learn(SBOND, "5DX", "Another", 6) is None
    assert tokens.by_symbol("SDX").mint == SDX and tokens.by_mint(SBOND) is None


@pytest.mark.parametrize("symbol", ["", "S DX", "USDС", "SDX\n", "-SDX", "A" * 13, "S\u202eDX"])  # Cyrillic С
def test_a_symbol_of_another_shape_is_not_learned(symbol):
    assert tokens.learn(SDX, symbol, "Sandbox Dollar", 6) is None


def test_a_name_of_another_shape_is_replaced_by_the_symbol():
    assert tokens.learn(SDX, "SDX", "Sandbox\u202eDollar", 6).name == "SDX"


def test_a_service_calling_another_mint_by_a_built_in_symbol_is_not_believed():
    assert tokens.passes_for_built_in("USDC", SDX) and tokens.passes_for_built_in("U5DC", SDX)
    assert not tokens.passes_for_built_in("USDC", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
    assert not tokens.passes_for_built_in("SDX", SDX)
