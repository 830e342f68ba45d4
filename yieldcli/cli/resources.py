"""Each kind of resource the service reads back, described once: its model (the library's parser),
its stable CSV columns (the documented fields, in the order the interface lists them) and its table.

The read commands, the sink's CSV format and the tables all look a kind up here. Importing this
module loads neither the models nor rich: both are reached when a resource is read or drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Resource(NamedTuple):  # not a dataclass: a read must not import dataclasses (start-up time)
    name: str
    model_name: str  # the parser's name in yieldcli.api.models
    columns: tuple[str, ...]  # CSV, stable
    table_name: str  # the drawer's name in yieldcli.cli.render.tables

    def model(self) -> Callable[..., Any]:
        """The library's parser for one item (`models.position(item, index)`, ...)."""
        from yieldcli.api import models

        parser: Callable[..., Any] = getattr(models, self.model_name)
        return parser

    def table(self) -> Callable[..., None]:
        from yieldcli.cli.render import tables

        drawer: Callable[..., None] = getattr(tables, self.table_name)
        return drawer


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
            "draw_positions",
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
            "draw_balances",
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
            "draw_earnings",
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
    return RESOURCES[kind].columns if kind in RESOURCES else OTHER_COLUMNS[kind]


def table_of(kind: str) -> Callable[..., None]:
    """The drawer of a kind: `(console, rows, more_pages)` for a page, `(console, body)` for an object."""
    if kind in RESOURCES:
        return RESOURCES[kind].table()
    from yieldcli.cli.render import tables

    drawer: Callable[..., None] = getattr(tables, OTHER_TABLES[kind])
    return drawer
