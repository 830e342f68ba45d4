"""What a table calls a token: a built-in mint by its own symbol whatever the service says, and a service's
symbol that reads as a built-in token's on another mint (U5DC, a Cyrillic С, full-width letters) as the
mint's address, so no other token is shown as USDC."""

from __future__ import annotations

import pytest

from tests.cli.render.test_layout import POSITION, draw
from yieldcli.api import models
from yieldcli.cli.render import tables

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
OTHER = "J3N4o2hND6ab5ToVqLK8sJUufUBgBcSZnc4Ra1Nfv5ep"


@pytest.mark.parametrize("said", ["USDC", "U5DC", "USDС", "UЅDC", "ＵＳＤＣ", "usdc.", "USDC\u200b"])
def test_another_mint_called_usdc_is_shown_by_its_address(said):
    row = dict(POSITION, token_symbol=said, token_address=OTHER)
    text = draw(200, tables.draw_positions, [models.position(row, 0)], None)
    assert "J3N4" in text and not any(line.lstrip().startswith(("USDC", "U5DC")) for line in text.splitlines())


def test_a_built_in_mint_is_shown_by_its_own_symbol():
    row = dict(POSITION, token_symbol="SDX", token_address=USDC)
    text = draw(200, tables.draw_positions, [models.position(row, 0)], None)
    assert any(line.startswith("USDC") for line in text.splitlines()) and "SDX" not in text


def test_another_symbol_is_the_services():
    row = dict(POSITION, token_symbol="SBOND", token_address=OTHER)
    assert any(
        line.startswith("SBOND")
        for line in draw(200, tables.draw_positions, [models.position(row, 0)], None).splitlines()
    )


@pytest.mark.parametrize("said", ["ꓴꓢꓓꓚ", "ᏚꓳᏞ", "SＤX\u0301"])  # Lisu, Cherokee, a combining mark
def test_a_symbol_in_another_script_is_shown_by_the_address(said):
    row = dict(POSITION, token_symbol=said, token_address=OTHER)
    text = draw(200, tables.draw_positions, [models.position(row, 0)], None)
    assert said not in text and "J3N4" in text


def test_a_learned_token_is_shown_by_its_own_metadata_and_its_symbol_by_no_other_mint():
    from yieldcli import tokens

    tokens.learn(OTHER, "SDX", "Sandbox Dollar", 6)
    mine = dict(POSITION, token_symbol="SBOND", token_address=OTHER)  # the service calls SDX "SBOND"
    other = dict(POSITION, token_symbol="sdx", token_address="7qXBsLq8zgvJ7hQWjb5nu5cPBMZYi4DY9MPvYFbk9hco")
    text = draw(200, tables.draw_positions, [models.position(mine, 0), models.position(other, 1)], None)
    rows = [line for line in text.splitlines() if line.startswith(("SDX", "sdx", "SBOND", "7qXB"))]
    assert [row.split()[0] for row in rows] == ["SDX", "7qXB…9hco"], rows


def test_a_built_in_token_is_counted_with_its_own_decimals_not_the_services():
    row = dict(POSITION, token_address=USDC, decimals=9, total_position_value=1_250_750_000)
    text = draw(200, tables.draw_positions, [models.position(row, 0)], None)
    assert "1,250.75" in text and "1.25075" not in text
