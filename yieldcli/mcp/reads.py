"""The read tools: strategy, positions, balances, earnings, health of the configured wallet.

Amounts are exact strings, in base units and in token units (`<name>_ui_amount_string`, the names the
command line's JSON and the library's models use); names and symbols from the service
are made inert (`results.inert`); no read takes a wallet, a strategy or a URL from the model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel

from yieldcli import tokens
from yieldcli.amounts import scale
from yieldcli.client.listed_tokens import resolve_listed
from yieldcli.errors import NetworkError
from yieldcli.mcp.results import failure, inert, ok
from yieldcli.tokens import ui_amount_string

ITEM_LIMIT = 200  # items per read: enough for one wallet, bounded for the model's context

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True)


class Amount(BaseModel):
    base_units: str
    token_units: str | None  # None when the token's decimals are not known


class StrategyOut(BaseModel):
    strategy_id: str
    strategy_name: str
    assets: list[str]
    symbols: list[str | None]  # each asset's symbol (a listed token's from its own metadata); None: not known
    apy: str | None  # variable, never guaranteed


# The read tools name each amount as the command line's JSON and the library's models do: the base-unit
# amount (here exact text) and beside it `<name>_ui_amount_string`, the token units as exact text (None when
# the token's decimals are unknown), with the record's `decimals`.


class PositionOut(BaseModel):
    token_symbol: str
    token_address: str
    decimals: int
    fund_id: str
    strategy_name: str
    total_deposited_value: str
    total_deposited_value_ui_amount_string: str | None
    total_position_value: str
    total_position_value_ui_amount_string: str | None
    yield_earned: str
    yield_earned_ui_amount_string: str | None
    apy: str | None


class BalanceOut(BaseModel):
    token_symbol: str
    token_address: str
    decimals: int
    total_balance: str
    total_balance_ui_amount_string: str | None
    wallet_part: str  # in the wallet, outside the strategy
    wallet_part_ui_amount_string: str | None
    funds: str | None  # in the strategy; None: no position in this token
    funds_ui_amount_string: str | None
    amount_of_yield: str | None
    amount_of_yield_ui_amount_string: str | None


class EarningOut(BaseModel):
    fund_id: str
    fund_name: str
    base_asset: str
    decimals: int | None
    position_value: str
    position_value_ui_amount_string: str | None
    yield_earned: str
    yield_earned_ui_amount_string: str | None
    apy: str | None


class Positions(BaseModel):
    wallet: str
    positions: list[PositionOut]
    truncated: bool


class Balances(BaseModel):
    wallet: str
    balances: list[BalanceOut]
    truncated: bool


class Earnings(BaseModel):
    wallet: str
    earnings: list[EarningOut]
    truncated: bool


class Health(BaseModel):
    status: str


def amount(raw: int, decimals: int | None) -> Amount:
    return Amount(base_units=str(raw), token_units=None if decimals is None else format(scale(raw, decimals), "f"))


def _amounts(record: Any, *names: str) -> dict[str, Any]:
    """Each named base-unit amount of a library model as exact text, and its `_ui_amount_string` twin."""
    out: dict[str, Any] = {}
    for name in names:
        raw = getattr(record, name)
        out[name] = None if raw is None else str(raw)
        out[f"{name}_ui_amount_string"] = (
            None if raw is None or record.decimals is None else ui_amount_string(raw, record.decimals)
        )
    return out


def _apy(value: Any) -> str | None:
    return None if value is None else inert(value, 32)


def _first(items: Any) -> tuple[list[Any], bool]:
    taken: list[Any] = []
    for item in items:
        if len(taken) == ITEM_LIMIT:
            return taken, True
        taken.append(item)
    return taken, False


def register_reads(server: MCPServer, client: Any, wallet: str) -> None:
    async def run(build: Callable[[], BaseModel]) -> CallToolResult:
        try:
            return ok(await anyio.to_thread.run_sync(build))
        except Exception as exc:  # every failure is the model's tool error, never a traceback
            return failure(exc)

    @server.tool(annotations=READ, description="The strategy this server works with: name, assets, APY (variable).")
    async def strategy() -> Annotated[CallToolResult, StrategyOut]:
        def build() -> StrategyOut:
            s = client.strategy()
            assets = s.assets[:ITEM_LIMIT]
            listed: dict[str, tokens.Token] = {}
            with contextlib.suppress(NetworkError):  # a chain not answering leaves those symbols None
                listed = {t.mint: t for t in client.learn_tokens(assets)}
            known = [tokens.built_in(a) or listed.get(a) for a in assets]
            return StrategyOut(
                strategy_id=inert(s.strategy_id),
                strategy_name=inert(s.strategy_name),
                assets=[inert(a) for a in assets],
                symbols=[k.symbol if k else None for k in known],
                apy=_apy(s.apy),
            )

        return await run(build)

    @server.tool(
        annotations=READ,
        description="The wallet's positions in the strategy; optionally one asset "
        "(a symbol such as USDC). Amounts are exact strings.",
    )
    async def positions(asset: str | None = None) -> Annotated[CallToolResult, Positions]:
        def build() -> Positions:
            items, cut = _first(client.iter_positions(wallet, asset=_asset(client, asset)))
            return Positions(
                wallet=wallet,
                truncated=cut,
                positions=[
                    PositionOut(
                        token_symbol=_symbol(p.token_address, p.token_symbol),
                        token_address=inert(p.token_address),
                        decimals=p.decimals,
                        fund_id=inert(p.fund_id),
                        strategy_name=inert(p.strategy_name),
                        **_amounts(p, "total_deposited_value", "total_position_value", "yield_earned"),
                        apy=_apy(p.apy),
                    )
                    for p in items
                ],
            )

        return await run(build)

    @server.tool(annotations=READ, description="The wallet's token balances: in the wallet and in the strategy.")
    async def balances(asset: str | None = None) -> Annotated[CallToolResult, Balances]:
        def build() -> Balances:
            items, cut = _first(client.iter_balances(wallet, asset=_asset(client, asset)))
            return Balances(
                wallet=wallet,
                truncated=cut,
                balances=[
                    BalanceOut(
                        token_symbol=_symbol(b.token_address, b.token_symbol),
                        token_address=inert(b.token_address),
                        decimals=b.decimals,
                        **_amounts(b, "total_balance", "wallet_part", "funds", "amount_of_yield"),
                    )
                    for b in items
                ],
            )

        return await run(build)

    @server.tool(annotations=READ, description="The yield the wallet earned, per fund.")
    async def earnings() -> Annotated[CallToolResult, Earnings]:
        def build() -> Earnings:
            items, cut = _first(client.iter_earnings(wallet))
            return Earnings(
                wallet=wallet,
                truncated=cut,
                earnings=[
                    EarningOut(
                        fund_id=inert(e.fund_id),
                        fund_name=inert(e.fund_name),
                        base_asset=inert(e.base_asset, 16),
                        decimals=e.decimals,
                        **_amounts(e, "position_value", "yield_earned"),
                        apy=_apy(e.apy),
                    )
                    for e in items
                ],
            )

        return await run(build)

    @server.tool(annotations=READ, description="Whether the service answers.")
    async def health() -> Annotated[CallToolResult, Health]:
        return await run(lambda: Health(status=inert(client.health(), 32)))


def _symbol(mint: str, reported: str) -> str:
    """The symbol the command line's tables show (`tokens.shown_symbol`), judged once made inert (an
    invisible character dropped must not turn "USDC<ZWSP>" into USDC); the address when it would mislead."""
    return tokens.shown_symbol(mint, inert(reported, 16)) or inert(mint)


def _asset(client: Any, value: str | None) -> str | None:
    """A known symbol (a listed token's by its metadata included) as its mint, or a mint address; an unknown
    symbol is the model's error, naming the known ones."""
    return None if value is None else resolve_listed(client, value)
