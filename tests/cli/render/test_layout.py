"""Table layout in-process: alignment, shortening, dropping by importance, never a cut number."""

import io
import re
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from rich.console import Console

from yieldcli.api import models
from yieldcli.cli.render import layout, tables
from yieldcli.cli.render.layout import Column


def draw(width: int, draw_fn, *args) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=False, highlight=False)
    draw_fn(console, *args)
    return console.file.getvalue()


def test_amounts_align_on_the_decimal_point_whatever_the_decimals():
    cells = layout.amounts([(15_000_000_000, 9), (15_276_400_125, 9), (2_500_000_000, 6), (0, 0), None, (-5, 6)])
    assert cells == ["15.00       ", "15.276400125", "2,500.00       ", "0          ", "—          ", "-0.000005   "]
    points = {len(c.rjust(15)) - len(c) + (c.index(".") if "." in c else len(c.rstrip())) for c in cells if "." in c}
    assert len(points) == 1


def test_short_ids_apy_and_times():
    assert layout.short_id("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v") == "EPjF…Dt1v"
    assert layout.short_id("short") == "short"
    assert [layout.apy(v) for v in (18.3, 8.425, 7, None, 0.005)] == ["18.30%", "8.43%", "7.00%", "—", "0.01%"]
    now = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)
    assert layout.when("2026-01-02T11:15:00Z", now) == "45m ago"
    assert layout.when("2026-01-02T02:00:00+00:00", now) == "10h ago"
    assert layout.when("2025-06-02T14:00:00+02:00", now) == "2025-06-02 12:00"  # shown in UTC
    assert layout.when("not a time", now) == "not a time" and layout.when("", now) == "—"


POSITION = {
    "apy": 8.42,
    "decimals": 6,
    "fund_id": "f05096b0-edbd-4552-b5b8-7adce015bc99",
    "last_updated": "2025-06-02T12:00:00+00:00",
    "strategy_id": "s",
    "strategy_name": "A Rather Long Strategy Name",
    "token_address": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    "token_name": "USD Coin",
    "token_symbol": "USDC",
    "total_deposited_value": 2_500_000_000,
    "total_position_value": 2**64 + 123_456,
    "yield_earned": -47_318_402,
}


@pytest.mark.parametrize("width", range(30, 201, 7))
def test_no_width_cuts_a_number(width):
    # A token that is not built in: its amounts are written with the decimals the service gives.
    listed = dict(POSITION, token_symbol="SDX", token_address="J3N4o2hND6ab5ToVqLK8sJUufUBgBcSZnc4Ra1Nfv5ep")
    rows = [
        models.position(dict(listed, decimals=d, total_deposited_value=POSITION["total_deposited_value"] + i), i)
        for i, d in enumerate((6, 9, 0))
    ]
    text = draw(width, tables.draw_positions, rows, None)
    records = [line for line in text.splitlines() if line.startswith("SDX")]
    if "Asset:" in text:  # too narrow for a row on one line: each record stacked, one `Header: value` a line
        records = [" " + block.replace("\n", " ") + " " for block in text.split("\n\n") if "SDX" in block]
    for row, p in zip(records, rows, strict=True):
        numbers = [Decimal(n.replace(",", "")) for n in re.findall(r"-?[\d,]+\.\d+|(?<=\s)-?[\d,]{2,}(?=\s|$)", row)]
        scale = Decimal(10) ** -p.decimals
        for raw in (p.total_deposited_value, p.total_position_value, p.yield_earned):
            assert raw * scale in numbers, (width, row)
    if width >= 100:
        assert all(len(line) <= width for line in text.splitlines())


def test_columns_go_in_order_of_importance_and_the_footer_says_which():
    rows = [models.position(POSITION, 0)]
    wide = draw(200, tables.draw_positions, rows, None)
    assert POSITION["fund_id"] in wide and "not shown" not in wide
    steps = []
    for width in range(160, 40, -1):
        text = draw(width, tables.draw_positions, rows, None)
        hidden = re.search(r"not shown: (.*) \(see -o json", text)
        steps.append(hidden.group(1) if hidden else "")
    order = list(dict.fromkeys(s for s in steps if s))
    assert order[:3] == ["Updated", "Fund, Updated", "Strategy, Fund, Updated"], order
    # the fund id is shortened in the middle before it is dropped
    assert any("f050…bc99" in draw(w, tables.draw_positions, rows, None) for w in range(60, 160))


def test_text_columns_are_cut_with_an_ellipsis_before_they_are_dropped():
    columns = [Column("Name", ["A Rather Long Strategy Name"], squeeze=8), Column("Value", ["1.00"], right=True)]
    text = draw(20, lambda c: layout.draw(c, columns))
    assert text.splitlines()[2] == "A Rather Lon…   1.00"  # 20 columns exactly, the number whole


def test_service_text_cannot_drive_the_terminal():
    # A mint that is no built-in token's: the service's symbol for it is what the table shows.
    evil = dict(
        POSITION,
        strategy_name="Evil\x1b[2J\x1b]0;title\x07\nnext",
        token_symbol="[bold]X\r",
        token_address="J3N4o2hND6ab5ToVqLK8sJUufUBgBcSZnc4Ra1Nfv5ep",
    )
    text = draw(200, tables.draw_positions, [models.position(evil, 0)], None)
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    row = next(line for line in text.splitlines() if line.startswith("[bold]X"))
    assert "Evil\\u{001B}[2J\\u{001B}]0;title\\u{0007}\\u{000A}next" in row  # escaped, as every review shows it
