"""Tables for people: decimals-adjusted amounts (exact), symbols, variable APY, totals, page footers."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable

from rich.console import Console
from rich.table import Table

from yieldcli import tokens
from yieldcli.amounts import format_units
from yieldcli.api import models

APY_HEADER = "APY (variable)"
APY_NOTE = "APY is variable and not guaranteed."


def apy_text(value: Any) -> str:
    return "—" if value is None else f"{value}%"


def short(address: str) -> str:
    return address if len(address) <= 12 else f"{address[:4]}…{address[-4:]}"


def symbol_for(mint: str, reported: str = "") -> str:
    if reported:
        return reported
    known = tokens.by_mint(mint)
    return known.symbol if known else short(mint)


def _table(title: str | None = None) -> Table:
    return Table(title=title, title_justify="left", show_footer=False, header_style="bold")


def _footer(console: Console, rows: list, more_pages: dict | None, noun: str) -> None:
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


def draw_positions(console: Console, rows: list[models.Position], more_pages: dict | None) -> None:
    table = _table("Positions")
    for name, justify in (
        ("Asset", "left"), ("Strategy", "left"), ("Deposited", "right"), ("Value", "right"),
        ("Yield earned", "right"), (APY_HEADER, "right"), ("Fund", "left"), ("Updated", "left"),
    ):
        table.add_column(name, justify=justify)
    for p in rows:
        table.add_row(
            symbol_for(p.token_address, p.token_symbol), p.strategy_name,
            format_units(p.total_deposited_value, p.decimals), format_units(p.total_position_value, p.decimals),
            format_units(p.yield_earned, p.decimals), apy_text(p.apy), p.fund_id, p.last_updated,
        )
    if _totals(rows, lambda p: p.token_address):
        d = rows[0].decimals
        table.add_section()
        table.add_row(
            "Total", "", format_units(sum(p.total_deposited_value for p in rows), d),
            format_units(sum(p.total_position_value for p in rows), d),
            format_units(sum(p.yield_earned for p in rows), d), "", "", "",
        )
    console.print(table)
    _footer(console, rows, more_pages, "positions")
    console.print(APY_NOTE, style="dim")


def draw_balances(console: Console, rows: list[models.Balance], more_pages: dict | None) -> None:
    table = _table("Balances")
    for name, justify in (
        ("Asset", "left"), ("Name", "left"), ("Wallet", "right"), ("In position", "right"),
        ("Total", "right"), ("Yield", "right"), (APY_HEADER, "right"),
    ):
        table.add_column(name, justify=justify)
    for b in rows:
        in_position = "—" if b.funds is None else format_units(b.funds, b.decimals)
        earned = "—" if b.amount_of_yield is None else format_units(b.amount_of_yield, b.decimals)
        table.add_row(
            symbol_for(b.token_address, b.token_symbol), b.token_name, format_units(b.wallet_part, b.decimals),
            in_position, format_units(b.total_balance, b.decimals), earned, apy_text(b.fund_apy),
        )
    if _totals(rows, lambda b: b.token_address):
        d = rows[0].decimals
        table.add_section()
        table.add_row(
            "Total", "", format_units(sum(b.wallet_part for b in rows), d),
            format_units(sum(b.funds or 0 for b in rows), d), format_units(sum(b.total_balance for b in rows), d),
            format_units(sum(b.amount_of_yield or 0 for b in rows), d), "",
        )
    console.print(table)
    _footer(console, rows, more_pages, "balances")
    console.print(APY_NOTE, style="dim")


def draw_earnings(console: Console, rows: list[models.YieldRecord], more_pages: dict | None) -> None:
    table = _table("Earnings")
    for name, justify in (
        ("Fund", "left"), ("Asset", "left"), ("Position value", "right"), ("Yield earned", "right"),
        (APY_HEADER, "right"), ("Since", "left"), ("Updated", "left"),
    ):
        table.add_column(name, justify=justify)
    per_asset: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        known = tokens.by_symbol(r.base_asset)
        # Yield records carry a symbol but no decimals: adjust only when the token is known.
        fmt = (lambda raw, d=known.decimals: format_units(raw, d)) if known else (lambda raw: f"{raw} (base units)")
        table.add_row(
            r.fund_name or r.fund_id, r.base_asset, fmt(r.position_value), fmt(r.yield_earned),
            apy_text(r.apy), r.entry_date, r.last_updated,
        )
        per_asset[r.base_asset][0] += r.position_value
        per_asset[r.base_asset][1] += r.yield_earned
    if _totals(rows, lambda r: r.base_asset) and tokens.by_symbol(rows[0].base_asset):
        d = tokens.by_symbol(rows[0].base_asset).decimals
        value, earned = per_asset[rows[0].base_asset]
        table.add_section()
        table.add_row("Total", rows[0].base_asset, format_units(value, d), format_units(earned, d), "", "", "")
    console.print(table)
    _footer(console, rows, more_pages, "records")
    console.print(APY_NOTE, style="dim")


def draw_strategy(console: Console, s: models.Strategy) -> None:
    console.print(f"[bold]{s.strategy_name or s.strategy_id}[/bold]  id {s.strategy_id}")
    console.print(f"Weighted APY (variable): {apy_text(s.apy)}")
    table = _table("Assets")
    table.add_column("Asset")
    table.add_column("Name")
    table.add_column("Mint")
    table.add_column(APY_HEADER, justify="right")
    for mint in s.assets:
        known = tokens.by_mint(mint)
        table.add_row(known.symbol if known else "?", known.name if known else "unknown token", mint,
                      apy_text(s.apy_per_asset.get(mint)))
    console.print(table)
    console.print(APY_NOTE, style="dim")


def draw_health(console: Console, body: Any) -> None:
    console.print(f"service: {body if isinstance(body, str) else body!r}")


PAGE_DRAWERS = {"positions": draw_positions, "balances": draw_balances, "earnings": draw_earnings}
OBJECT_DRAWERS = {"strategy": draw_strategy, "health": draw_health}


def draw_page(console: Console, kind: str, rows: list, more_pages: dict | None) -> None:
    PAGE_DRAWERS[kind](console, rows, more_pages)


def draw_object(console: Console, kind: str, body: Any) -> None:
    OBJECT_DRAWERS[kind](console, body)
