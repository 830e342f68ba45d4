"""The twins put into a page read as records (`amount_lines.with_twins`) are, byte for byte, what
`amount_fields.adder` and json.dumps give for the same items: random pages of positions with one
`decimals` or many, amounts of u128 size, below zero, zero, smaller than one token."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from yieldcli.api.page_text import positions_page
from yieldcli.cli.render.amount_fields import AMOUNTS, adder, twin
from yieldcli.cli.render.amount_lines import with_twins
from yieldcli.tokens import ui_amount_string

amounts = st.one_of(
    st.integers(min_value=0, max_value=10**13),
    st.integers(min_value=0, max_value=999),  # less than one token
    st.integers(min_value=-(2**127), max_value=2**128 - 1),
    st.sampled_from([0, 10**6, 2500000000, 47318400, -5]),
)


def _item(decimals: int, deposited: int, value: int, earned: int, symbol: str) -> dict[str, Any]:
    return {
        "apy": 8.42,
        "decimals": decimals,
        "fund_id": "f0",
        "last_updated": "2025-06-02T12:00:00+00:00",
        "strategy_id": "s1",
        "strategy_name": "Sandbox Yield Strategy",
        "token_address": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        "token_name": "Token",
        "token_symbol": symbol,
        "total_deposited_value": deposited,
        "total_position_value": value,
        "yield_earned": earned,
        "fund_status": "Live",
    }


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 30), amounts, amounts, amounts, st.sampled_from(["USDC", "SOL", "é"])),
        min_size=1,
        max_size=6,
    ),
    st.booleans(),
)
@example([(6, 2500000000, 2547318402, 47318402, "USDC")], True)
@example([(9, 5, 0, 10**9, "SOL"), (9, 1, 2, 3, "SOL")], True)
@example([(0, 7, 0, 2**128 - 1, "USDC")], True)
@example([(6, -5, 0, 1, "USDC"), (2, 5, 0, 1, "USDC")], False)
def test_the_twins_are_the_plain_paths(drawn: list[tuple[int, int, int, int, str]], one_decimals: bool) -> None:
    if one_decimals:
        drawn = [(drawn[0][0], *rest) for _, *rest in drawn]  # type: ignore[misc]
    items = [_item(*values) for values in drawn]
    meta = {"has_more": False, "page": 1, "per_page": 100, "total": len(items), "total_pages": 1}
    page = positions_page(json.dumps({"data": items, "meta": meta}, separators=(",", ":"), ensure_ascii=False).encode())
    assert page is not None
    add = adder("positions")
    assert add is not None
    plain = "".join(json.dumps(add(item), ensure_ascii=False) + "\n" for item in items).encode()
    assert with_twins(page, AMOUNTS["positions"], twin, ui_amount_string) == plain


def test_nested_amounts_have_no_slots() -> None:
    item = _item(6, 1, 2, 3, "USDC")
    meta = {"has_more": False, "page": 1, "per_page": 1, "total": 1, "total_pages": 1}
    page = positions_page(json.dumps({"data": [item], "meta": meta}, separators=(",", ":")).encode())
    assert page is not None
    assert with_twins(page, AMOUNTS["balances"], twin, ui_amount_string) is None
