"""Each kind of resource the service reads back, described once: its model (the library's parser),
its stable CSV columns (the documented fields, in the order the interface lists them) and its table
(for a page: what `tables.draw_page` shows, as data; for an object: its drawer's name).

The read commands, the sink's CSV format and the tables all look a kind up here; a listing with no
options of its own gets its command from here too (`command`). Importing this module loads neither
rich nor a transport: it is read when a resource is read or drawn, and by `--help` for the commands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from yieldcli.cli.render.table_specs import AMOUNT, APY, FIRST, SYMBOL, WHEN, Cell, PageTable


class Resource(NamedTuple):  # not a dataclass: a read must not import dataclasses (start-up time)
    name: str
    model_name: str  # the parser's name in yieldcli.api.models
    columns: tuple[str, ...]  # CSV, stable
    table: PageTable | str  # a page's table, or the name of an object's drawer in cli/render/tables.py
    # A listing of one wallet with nothing but paging to ask: its command's help, and the command
    # `yield NAME [WALLET]` is made from it (`commands.reads.listing_command`). None: a command of its own.
    command: str | None = None

    def model(self) -> Callable[..., Any]:
        """The library's parser for one item (`models.position(item, index)`, ...)."""
        from yieldcli.api import models  # `--help` reads the descriptors for their commands, not the models

        parser: Callable[..., Any] = getattr(models, self.model_name)
        return parser


def _places(mint: str, said: int | None) -> int | None:
    """The decimals a table writes a row's amounts with: a built-in token's own, never the service's
    word for it (a service saying USDC has 9 would show 1,250.75 USDC as 1.25075); else the service's."""
    from yieldcli.tokens import built_in

    shipped = built_in(mint)
    return shipped.decimals if shipped else said


def _any_fund_not_live(rows: list[Any]) -> bool:
    return any(r.fund_status not in (None, "Live") for r in rows)


RESOURCES: dict[str, Resource] = {
    r.name: r
    for r in (
        Resource(
            "positions",
            "position",
            (
                "apy",
                "decimals",
                "fund_id",
                "fund_status",
                "last_updated",
                "strategy_id",
                "strategy_name",
                "token_address",
                "token_name",
                "token_symbol",
                "total_deposited_value",
                "total_position_value",
                "yield_earned",
            ),
            PageTable(
                "Positions",
                "positions",
                (
                    Cell("Asset", lambda p: (p.token_address, p.token_symbol), SYMBOL, total="Total"),
                    Cell("Strategy", "strategy_name", drop=1, squeeze=12),
                    Cell("Deposited", "total_deposited_value", AMOUNT),
                    Cell("Value", "total_position_value", AMOUNT),
                    Cell("Yield earned", "yield_earned", AMOUNT),
                    Cell("APY", "apy", APY),
                    # A fund that is not Live is worth a column; one that is needs none.
                    Cell("Status", lambda p: p.fund_status or "", shown=_any_fund_not_live),
                    Cell("Fund", "fund_id", drop=2, address=True),
                    Cell("Updated", "last_updated", WHEN, drop=3),
                ),
                token=lambda p: p.token_address,
                decimals=lambda p: _places(p.token_address, p.decimals),
            ),
        ),
        Resource(
            "balances",
            "balance",
            (
                "decimals",
                "token_address",
                "token_name",
                "token_symbol",
                "total_balance",
                "yield_balance.amount_of_yield",
                "yield_balance.fund_apy",
                "yield_balance.fund_id",
                "yield_balance.funds",
            ),
            PageTable(
                "Balances",
                "balances",
                (
                    Cell("Asset", lambda b: (b.token_address, b.token_symbol), SYMBOL, total="Total"),
                    Cell("Name", "token_name", drop=3, squeeze=10),
                    Cell("Wallet", "wallet_part", AMOUNT),
                    Cell("In position", "funds", AMOUNT),
                    Cell("Total", "total_balance", AMOUNT),
                    # Yield goes before APY: a 9-decimal yield column is wide, and `earnings` shows it too.
                    Cell("Yield", "amount_of_yield", AMOUNT, drop=2),
                    Cell("APY", "fund_apy", APY, drop=1),
                ),
                token=lambda b: b.token_address,
                decimals=lambda b: _places(b.token_address, b.decimals),
            ),
        ),
        Resource(
            "earnings",
            "yield_record",
            (
                "apy",
                "base_asset",
                "entry_date",
                "fund_id",
                "fund_name",
                "last_updated",
                "position_value",
                "yield_earned",
            ),
            PageTable(
                "Earnings",
                "records",
                (
                    Cell("Fund", lambda r: r.fund_name or r.fund_id, total="Total", drop=1, squeeze=16),
                    # Yield records carry a symbol but no decimals: amounts are adjusted only for known tokens.
                    Cell(
                        "Asset",
                        lambda r: r.base_asset if r.decimals is not None else f"{r.base_asset} (base units)",
                        total=FIRST,
                    ),
                    Cell("Position value", "position_value", AMOUNT),
                    Cell("Yield earned", "yield_earned", AMOUNT),
                    Cell("APY", "apy", APY),
                    Cell("Since", "entry_date", WHEN, drop=2),
                    Cell("Updated", "last_updated", WHEN, drop=3),
                ),
                token=lambda r: r.base_asset,
                decimals=lambda r: r.decimals,
            ),
        ),
        Resource(
            "strategy", "strategy", ("strategy_id", "strategy_name", "apy", "assets", "apy_per_asset"), "draw_strategy"
        ),
    )
}

# Results that are not a resource of the service but have CSV columns of their own.
OTHER_COLUMNS: dict[str, tuple[str, ...]] = {
    "health": ("status",),
    "auth": ("profile", "source", "location", "key", "accepted", "check"),
}


OTHER_TABLES = {"health": "draw_health"}


def csv_columns(kind: str) -> tuple[str, ...]:
    """The stable columns, with `decimals` and each base-unit amount's token-unit twin beside it."""
    from yieldcli.cli.render.amount_fields import columns_with_amounts

    return columns_with_amounts(kind, RESOURCES[kind].columns) if kind in RESOURCES else OTHER_COLUMNS[kind]


def table_of(kind: str) -> PageTable | str:
    """The table of a kind: what a page shows, or the name of the drawer of an object."""
    return RESOURCES[kind].table if kind in RESOURCES else OTHER_TABLES[kind]
