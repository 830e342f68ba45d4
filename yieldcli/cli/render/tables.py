"""Tables for people: decimals-adjusted amounts (exact), symbols, variable APY, totals, page footers.

What each table shows and what it gives up first when narrow; fitting is `layout.py`'s job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from yieldcli import tokens
from yieldcli.cli.render import layout
from yieldcli.cli.render import table_specs as specs
from yieldcli.cli.render.layout import Column
from yieldcli.cli.render.text import printable
from yieldcli.cli.resources import RESOURCES

if TYPE_CHECKING:  # the models are only named in annotations: render/ depends on no part of api/
    from yieldcli.api import models

APY_NOTE = "APY (variable): it changes over time and is not guaranteed."


def short(address: str) -> str:
    return layout.short_id(address)


NATIVE_SOL_LABEL = "SOL (native)"


def symbol_for(mint: str, reported: str = "") -> str:
    if mint == tokens.NATIVE_SOL_PSEUDO_MINT:
        return NATIVE_SOL_LABEL  # beside wrapped SOL, which the service also calls SOL
    # A built-in mint by its own symbol; a service calling another mint USDC (or U5DC) gets its address.
    shown = tokens.shown_symbol(mint, reported)
    if shown:
        return shown
    known = tokens.by_mint(mint)
    return known.symbol if known else short(mint)


def _footer(console: Console, rows: list[Any], more_pages: dict[str, Any] | None, noun: str) -> None:
    if more_pages:
        meta = more_pages
        console.print(
            f"page {meta.get('page')} of {meta.get('total_pages')}, {meta.get('total')} {noun}: use --all "
            f"(or --page {int(meta.get('page') or 1) + 1})"
        )
    elif not rows:
        console.print(f"no {noun}")


def _totals(rows: list[Any], mint_of: Callable[[Any], str]) -> bool:
    """A totals row means something only when every row is in the same token."""
    return len(rows) > 1 and len({mint_of(r) for r in rows}) == 1


def _amount_column(header: str, values: list[int | None], decimals: list[int]) -> Column:
    pairs = [None if v is None else (v, d) for v, d in zip(values, decimals, strict=True)]
    return Column(header, layout.amounts(pairs), right=True, styles=layout.negative_red(values))


_SHOWN: dict[str, Callable[[Any], str]] = {
    specs.TEXT: str,
    specs.SYMBOL: lambda pair: symbol_for(*pair),
    specs.APY: layout.apy,
    specs.WHEN: layout.when,
}


def draw_page(
    console: Console,
    rows: list[Any],
    more_pages: dict[str, Any] | None,
    table: specs.PageTable,
    *,
    apy_note: bool = True,
) -> None:
    """A page of any resource, as its descriptor's `table` says: a totals row when every row is in one
    known token, the footer that says how to get the other pages, the APY note (unless `apy_note` is off:
    said once under many tables)."""
    places = [table.decimals(r) for r in rows]
    total = _totals(rows, table.token) and places[0] is not None
    extra = 1 if total else 0
    decimals = [0 if p is None else p for p in places]
    decimals += decimals[:1] * extra

    def column(cell: specs.Cell) -> Column:
        get = cell.value if callable(cell.value) else attrgetter(cell.value)
        values = [get(r) for r in rows]
        if cell.kind == specs.AMOUNT:
            summed = values + [sum(v or 0 for v in values)] * extra
            return _amount_column(cell.header, summed, decimals)._replace(drop=cell.drop)
        texts = [_SHOWN[cell.kind](v) for v in values]
        below = texts[0] if cell.total == specs.FIRST and texts else cell.total
        return Column(
            cell.header,
            texts + [below] * extra,
            right=cell.kind == specs.APY,
            drop=cell.drop,
            address=cell.address,
            squeeze=cell.squeeze,
        )

    if rows:
        cells = [cell for cell in table.cells if cell.shown is None or cell.shown(rows)]
        layout.draw(console, [column(cell) for cell in cells], title=table.title, total_row=total)
    else:
        console.print(f"[bold]{table.title}[/bold]")
    _footer(console, rows, more_pages, table.noun)
    if table.apy_note and apy_note:
        console.print(APY_NOTE, style="dim")


def draw_wallets(console: Console, table: specs.PageTable, results: Iterable[tuple[str, Any]]) -> None:
    """Many wallets' pages, in input order: a wallet with nothing on one line (`ADDRESS  no balances`),
    the others under their address with their table; the APY note once, at the end."""
    tables = 0
    lines = 0
    for wallet, result in results:
        rows = [typed for _, typed in result.entries]
        if not rows and not result.more_pages:
            console.print(f"{printable(wallet)}  no {table.noun}", markup=False, highlight=False)
            lines += 1
            continue
        if tables or lines:
            console.print()
        console.print(printable(wallet), style="bold", markup=False, highlight=False)
        draw_page(console, rows, result.more_pages, table, apy_note=False)
        tables += 1
    if table.apy_note and tables:
        console.print(APY_NOTE, style="dim")


def draw_positions(console: Console, rows: list[models.Position], more_pages: dict[str, Any] | None) -> None:
    """The positions table by name (the layout tests draw it directly)."""
    table = RESOURCES["positions"].table
    assert isinstance(table, specs.PageTable)
    draw_page(console, rows, more_pages, table)


def draw_strategy(console: Console, s: models.Strategy) -> None:
    console.print(
        f"[bold]{escape(printable(s.strategy_name or s.strategy_id))}[/bold]  id {escape(printable(s.strategy_id))}"
    )
    console.print(f"Weighted APY: {layout.apy(s.apy)}")
    known = [tokens.by_mint(mint) for mint in s.assets]
    layout.draw(
        console,
        [
            Column("Asset", [k.symbol if k else "?" for k in known]),
            Column("Name", [k.name if k else "unknown token" for k in known], drop=1, squeeze=10),
            Column("Mint", list(s.assets), address=True),
            Column("APY", [layout.apy(s.apy_per_asset.get(mint)) for mint in s.assets], right=True),
            *(
                [Column("Status", [s.status_per_asset.get(mint, "?") for mint in s.assets])]
                if s.status_per_asset is not None
                else []
            ),
        ],
        title="Assets",
    )
    console.print(APY_NOTE, style="dim")


def draw_health(console: Console, body: Any) -> None:
    console.print(f"service: {printable(body if isinstance(body, str) else repr(body))}", markup=False)
