"""What a page of a resource looks like as a table, as data: the resource's descriptor (`cli/resources.py`)
carries one, and `tables.draw_page` draws any of them, so a new resource needs no drawer of its own.

No rich here: describing a table costs nothing until one is drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

# How a cell's value is shown.
TEXT = "text"  # as it is
SYMBOL = "symbol"  # a (mint, symbol the service reported) pair: the token's symbol
AMOUNT = "amount"  # base units, shown in token units with the row's decimals; summed in a totals row
APY = "apy"  # a variable rate, right-aligned
WHEN = "when"  # a timestamp, shown as how long ago

FIRST = "\0first"  # a totals-row text: the first row's (every row shares it when there is a totals row)


class Cell(NamedTuple):
    header: str
    value: str | Callable[[Any], Any]  # an attribute of the typed row, or a function of it
    kind: str = TEXT
    total: str = ""  # the text in the totals row (an amount's is its sum); FIRST: the first row's
    drop: int = 0  # higher is dropped first when narrow; 0: never (as `layout.Column`)
    squeeze: int = 0  # a text may be cut (with …) down to this width; 0: never
    address: bool = False  # shortened in the middle when space is short
    shown: Callable[[list[Any]], bool] | None = None  # drawn only when this says so of the page's rows


class PageTable(NamedTuple):
    title: str
    noun: str  # what the rows are, in the footer and when there are none: "positions", "records"
    cells: tuple[Cell, ...]
    token: Callable[[Any], str]  # a row's token: a totals row is drawn only when every row has the same
    decimals: Callable[[Any], int | None]  # a row's token decimals; None: unknown (base units, no totals)
    apy_note: bool = True  # say under the table that APY is variable
