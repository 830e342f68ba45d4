"""Tables that fit the terminal without cutting a number.

A table is a list of `Column`s of ready-made text. To fit a width, ids and addresses are first
shortened in the middle, then whole columns are dropped, least important first; amount cells are
never wrapped or truncated. When nothing more can be dropped and a row still does not fit, each row
is drawn as a block of `Header: value` lines (every column, none hidden): no digit is lost, and the
terminal has nothing to wrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, NamedTuple

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.text import Text

from yieldcli.amounts import format_units
from yieldcli.cli.render.text import printable

NEVER = 0  # a column with this drop rank stays whatever the width
GAP = 2  # spaces between columns


class Column(NamedTuple):
    header: str
    cells: list[str]
    right: bool = False
    drop: int = NEVER  # higher is dropped first
    address: bool = False  # shortened in the middle when space is short
    squeeze: int = 0  # a text column may be cut (with …) down to this width; 0: never cut
    styles: list[str | None] | None = None


class Fitted(NamedTuple):
    table: Text
    hidden: list[str]
    width: int


def short_id(text: str) -> str:
    """`EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v` -> `EPjF…Dt1v`: the ends are what people compare."""
    return text if len(text) <= 12 else f"{text[:4]}…{text[-4:]}"


class Address(str):
    """A piece of a line that `fit_line` may shorten in the middle."""


def fit_line(width: int, *pieces: str) -> str:
    """The pieces joined; when that is wider than `width`, every `Address` among them shortened.

    Other pieces (amounts, words) are never touched: a line that still does not fit is left to the
    terminal to wrap, whole."""
    line = "".join(pieces)
    if cell_len(line) <= width:
        return line
    return "".join(short_id(p) if isinstance(p, Address) else p for p in pieces)


def amounts(values: Sequence[tuple[int, int] | None]) -> list[str]:
    """Amounts (raw, decimals) as text aligned on the decimal point when right-justified.

    Trailing zeros are trimmed (at least two fraction digits remain), then every cell is padded on
    the right to the column's longest fraction, so points line up whatever the token's decimals.
    `None` is shown as a dash in the integer part's place.
    """
    texts = ["" if v is None else format_units(v[0], v[1]) for v in values]
    fraction = max((len(t) - t.index(".") - 1 for t in texts if "." in t), default=0)

    def pad(text: str) -> str:
        if not text:
            text = "—"
        digits = len(text) - text.index(".") - 1 if "." in text else -1
        return text + " " * (fraction - digits)

    return [pad(t) for t in texts]


def apy(value: Any) -> str:
    """APY with two decimals, from the number the service sent (never through float formatting)."""
    if value is None or isinstance(value, bool):
        return "—"
    try:
        exact = Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    except (InvalidOperation, ValueError):
        return str(value)
    return f"{exact}%"


def when(stamp: str, now: datetime | None = None) -> str:
    """A short UTC time: relative within the last day (`5m ago`), else `2025-06-02 12:00`."""
    if not stamp:
        return "—"
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    age = ((now or datetime.now(UTC)) - moment).total_seconds()
    if 0 <= age < 60:
        return "just now"
    if 0 <= age < 3600:
        return f"{int(age // 60)}m ago"
    if 0 <= age < 86400:
        return f"{int(age // 3600)}h ago"
    return moment.strftime("%Y-%m-%d %H:%M")


def negative_red(values: Sequence[int | None]) -> list[str | None]:
    """Losses in red: the one colour an amount column carries."""
    return ["red" if v is not None and v < 0 else None for v in values]


def _cells(columns: Sequence[Column], shorten: bool) -> list[list[str]]:
    return [[printable(short_id(t) if shorten and col.address else t) for t in col.cells] for col in columns]


def _widths(columns: Sequence[Column], texts: list[list[str]]) -> list[int]:
    return [max(map(cell_len, [col.header, *cells])) for col, cells in zip(columns, texts, strict=True)]


def _squeezed(columns: Sequence[Column], widths: list[int], excess: int) -> list[int] | None:
    """Widths with text columns cut (never below their `squeeze`) to lose `excess`, or None.

    A text column is cut only once every column less important than it is gone: a strategy name
    is worth more than a fund id, even a cut one."""
    widths = list(widths)
    least = max((col.drop for col in columns), default=NEVER)
    while excess > 0:
        room = [
            (widths[i] - col.squeeze, i)
            for i, col in enumerate(columns)
            if col.squeeze and widths[i] > col.squeeze and col.drop >= least
        ]
        if not room:
            return None
        _, widest = max(room)
        widths[widest] -= 1
        excess -= 1
    return widths


def build(
    columns: Sequence[Column],
    texts: list[list[str]],
    widths: list[int],
    *,
    title: str | None,
    total_row: bool,
    indent: int = 0,
) -> Text:
    """The table as one styled text: title, header, rule, rows, a blank line before a totals row.

    Drawn by hand rather than with rich's Table: the widths are already known, rich strips the
    trailing spaces that keep decimal points in one column, and it takes seconds for 5,000 rows."""
    out = Text()
    gap = " " * GAP
    margin = " " * indent

    def padded(text: str, col: Column, width: int) -> str:
        if cell_len(text) > width:  # only text columns get here (see `_squeezed`)
            text = set_cell_size(text, width - 1) + "…"
        room = width - cell_len(text)
        return " " * room + text if col.right else text + " " * room

    if title:
        out.append(margin + printable(title) + "\n", style="bold")
    out.append(
        margin + gap.join(padded(col.header, col, w) for col, w in zip(columns, widths, strict=True)).rstrip() + "\n",
        style="bold",
    )
    out.append(margin + "─" * (sum(widths) + GAP * (len(widths) - 1)) + "\n")
    rows = len(texts[0]) if texts else 0
    for i in range(rows):
        if total_row and i == rows - 1:
            out.append("\n")
        pieces: list[tuple[str, str | None]] = [(margin, None)]
        for n, (col, cells, width) in enumerate(zip(columns, texts, widths, strict=True)):
            if n:
                pieces.append((gap, None))
            pieces.append((padded(cells[i], col, width), col.styles[i] if col.styles else None))
        pieces[-1] = (pieces[-1][0].rstrip(), pieces[-1][1])
        for text, style in pieces:
            out.append(text, style=style)
        out.append("\n")
    return out


def fit(
    console: Console, columns: Sequence[Column], *, title: str | None = None, total_row: bool = False, indent: int = 0
) -> Fitted:
    """The widest table that fits the console: full ids, then short ids, then text cut short, then
    fewer columns (highest `drop` first). Widths are worked out first; the table is built once."""
    visible = list(range(len(columns)))
    limit = console.width - indent
    while True:
        shown = [columns[i] for i in visible]
        hidden = [c.header for i, c in enumerate(columns) if i not in visible]
        gaps = GAP * (len(shown) - 1)
        for shorten in (False, True):
            texts = _cells(shown, shorten)
            widths = _widths(shown, texts)
            if sum(widths) + gaps <= limit:
                break
        else:
            squeezed = _squeezed(shown, widths, sum(widths) + gaps - limit)
            droppable = [i for i in visible if columns[i].drop != NEVER]
            if squeezed is None and droppable:
                visible.remove(max(droppable, key=lambda i: columns[i].drop))
                continue
            if squeezed is None:  # too narrow for any row on one line: a record per block, each cell whole
                return stacked(columns, limit, title=title, indent=indent)
            widths = squeezed
        table = build(shown, texts, widths, title=title, total_row=total_row, indent=indent)
        return Fitted(table, hidden, sum(widths) + gaps + indent)


def stacked(columns: Sequence[Column], width: int, *, title: str | None = None, indent: int = 0) -> Fitted:
    """Every column of every row as `Header: value` lines, a blank line between rows (a totals row is
    one more block): on a screen too narrow for the rows, nothing is hidden and no line is wrapped by
    the terminal in the middle of a number. Empty cells are left out; an address too long is shortened."""
    out = Text()
    margin = " " * indent
    key_width = max((cell_len(col.header) for col in columns), default=0)
    texts = _cells(columns, False)
    widest = 0
    if title:
        out.append(margin + printable(title) + "\n", style="bold")
        widest = cell_len(printable(title))
    for i in range(len(texts[0]) if texts else 0):
        if i:
            out.append("\n")
        for col, cells in zip(columns, texts, strict=True):
            value = cells[i].strip()
            if not value:
                continue
            key = f"{margin}{col.header}:".ljust(indent + key_width + 2)
            if col.address and cell_len(key + value) > width:
                value = short_id(value)
            out.append(key, style="bold")
            out.append(value + "\n", style=col.styles[i] if col.styles else None)
            widest = max(widest, cell_len(key + value))
    return Fitted(out, [], widest)


def draw(
    console: Console, columns: Sequence[Column], *, title: str | None = None, total_row: bool = False, indent: int = 0
) -> None:
    fitted = fit(console, columns, title=title, total_row=total_row, indent=indent)
    # soft_wrap: rich neither wraps nor crops it; a table wider than the screen is wrapped by the terminal.
    console.print(fitted.table, soft_wrap=True, end="")
    if fitted.hidden:
        console.print(
            f"not shown: {', '.join(fitted.hidden)} (see -o json, or widen the terminal)", style="dim", markup=False
        )
