"""Tables for people: decimals-adjusted amounts (exact), symbols, variable APY, totals, page footers.

What each table shows and what it gives up first when narrow; fitting is `layout.py`'s job.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from yieldcli import tokens
from yieldcli.cli.render import layout
from yieldcli.cli.render.layout import Column
from yieldcli.cli.render.text import printable

if TYPE_CHECKING:  # the models are only named in annotations: render/ depends on no part of api/
    from yieldcli.api import models

APY_NOTE = "APY (variable): it changes over time and is not guaranteed."


def short(address: str) -> str:
    return layout.short_id(address)


NATIVE_SOL_LABEL = "SOL (native)"


def symbol_for(mint: str, reported: str = "") -> str:
    if mint == tokens.NATIVE_SOL_PSEUDO_MINT:
        return NATIVE_SOL_LABEL  # beside wrapped SOL, which the service also calls SOL
    if reported:
        return reported
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
    pairs = [None if v is None else (v, d) for v, d in zip(values, decimals)]
    return Column(header, layout.amounts(pairs), right=True, styles=layout.negative_red(values))


def draw_positions(console: Console, rows: list[models.Position], more_pages: dict[str, Any] | None) -> None:
    total = _totals(rows, lambda p: p.token_address)
    extra = 1 if total else 0
    decimals = [p.decimals for p in rows] + [rows[0].decimals] * extra if rows else []

    def amount(header: str, field: str) -> Column:
        values = [getattr(p, field) for p in rows]
        return _amount_column(header, values + [sum(values)] * extra, decimals)

    if rows:
        layout.draw(
            console,
            [
                Column("Asset", [symbol_for(p.token_address, p.token_symbol) for p in rows] + ["Total"] * extra),
                Column("Strategy", [p.strategy_name for p in rows] + [""] * extra, drop=1, squeeze=12),
                amount("Deposited", "total_deposited_value"),
                amount("Value", "total_position_value"),
                amount("Yield earned", "yield_earned"),
                Column("APY", [layout.apy(p.apy) for p in rows] + [""] * extra, right=True),
                Column("Fund", [p.fund_id for p in rows] + [""] * extra, drop=2, address=True),
                Column("Updated", [layout.when(p.last_updated) for p in rows] + [""] * extra, drop=3),
            ],
            title="Positions",
            total_row=total,
        )
    else:
        console.print("[bold]Positions[/bold]")
    _footer(console, rows, more_pages, "positions")
    console.print(APY_NOTE, style="dim")


def draw_balances(console: Console, rows: list[models.Balance], more_pages: dict[str, Any] | None) -> None:
    total = _totals(rows, lambda b: b.token_address)
    extra = 1 if total else 0
    decimals = [b.decimals for b in rows] + [rows[0].decimals] * extra if rows else []

    def amount(header: str, values: list[int | None]) -> Column:
        return _amount_column(header, values + [sum(v or 0 for v in values)] * extra, decimals)

    if rows:
        layout.draw(
            console,
            [
                Column("Asset", [symbol_for(b.token_address, b.token_symbol) for b in rows] + ["Total"] * extra),
                Column("Name", [b.token_name for b in rows] + [""] * extra, drop=3, squeeze=10),
                amount("Wallet", [b.wallet_part for b in rows]),
                amount("In position", [b.funds for b in rows]),
                amount("Total", [b.total_balance for b in rows]),
                # Yield goes before APY: a 9-decimal yield column is wide, and `earnings` shows it too.
                amount("Yield", [b.amount_of_yield for b in rows])._replace(drop=2),
                Column("APY", [layout.apy(b.fund_apy) for b in rows] + [""] * extra, right=True, drop=1),
            ],
            title="Balances",
            total_row=total,
        )
    else:
        console.print("[bold]Balances[/bold]")
    _footer(console, rows, more_pages, "balances")
    console.print(APY_NOTE, style="dim")


def draw_earnings(console: Console, rows: list[models.YieldRecord], more_pages: dict[str, Any] | None) -> None:
    # Yield records carry a symbol but no decimals: adjust only when the token is known.
    known = [tokens.by_symbol(r.base_asset) for r in rows]
    decimals = [k.decimals if k else 0 for k in known]
    total = _totals(rows, lambda r: r.base_asset) and known[0] is not None
    extra = 1 if total else 0
    decimals += decimals[:1] * extra

    def amount(header: str, field: str) -> Column:
        values = [getattr(r, field) for r in rows]
        return _amount_column(header, values + [sum(values)] * extra, decimals)

    if rows:
        layout.draw(
            console,
            [
                Column("Fund", [r.fund_name or r.fund_id for r in rows] + ["Total"] * extra, drop=1, squeeze=16),
                Column(
                    "Asset",
                    [r.base_asset if k else f"{r.base_asset} (base units)" for r, k in zip(rows, known)]
                    + [rows[0].base_asset] * extra,
                ),
                amount("Position value", "position_value"),
                amount("Yield earned", "yield_earned"),
                Column("APY", [layout.apy(r.apy) for r in rows] + [""] * extra, right=True),
                Column("Since", [layout.when(r.entry_date) for r in rows] + [""] * extra, drop=2),
                Column("Updated", [layout.when(r.last_updated) for r in rows] + [""] * extra, drop=3),
            ],
            title="Earnings",
            total_row=total,
        )
    else:
        console.print("[bold]Earnings[/bold]")
    _footer(console, rows, more_pages, "records")
    console.print(APY_NOTE, style="dim")


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
        ],
        title="Assets",
    )
    console.print(APY_NOTE, style="dim")


def draw_health(console: Console, body: Any) -> None:
    console.print(f"service: {printable(body if isinstance(body, str) else repr(body))}", markup=False)
