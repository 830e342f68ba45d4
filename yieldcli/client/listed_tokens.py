"""A symbol of a token the strategy lists that is not built in, resolved by every face alike.

`asset="SDX"` names a listed mint only by that mint's own on-chain metadata: a symbol that is neither a
built-in one nor a mint address has the strategy's listing read and its unknown mints learned from the
chain (`Client.learn_tokens`) before it is refused. The command line (`--asset`), the library's writes
(`Client.deposit(asset=...)`, through `client.driver.ready`) and the agent server (`asset`) ask here.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from yieldcli import tokens
from yieldcli.api import models
from yieldcli.api.endpoints import Endpoints
from yieldcli.chain.token_names import learn_tokens
from yieldcli.errors import UsageError

if TYPE_CHECKING:
    from yieldcli.client.prepared import ChainSettings


def worth_asking(value: str) -> bool:
    """Whether `value` could be a listed token's symbol (not a built-in symbol or an address)."""
    try:
        tokens.resolve_asset(value)
    except UsageError:
        return tokens.learnable(value, value) is not None
    return False


def resolve_listed(client: Any, value: str, name: str = "asset", strategy: str | None = None) -> str:
    """`value` as a mint: a built-in symbol or an address at once, else a symbol of the strategy's tokens
    as this client's service lists them and its chain names them, read now (a blocking `Client`); anything
    else refused with the known symbols."""
    if not worth_asking(value):
        return tokens.resolve_asset(value, name)
    listed = client.learn_tokens(client.strategy(strategy).assets)
    return tokens.resolve_asset(value, name, listed)


async def listed_mint(api: Any, settings: ChainSettings, asset: str | None, strategy_id: str | None) -> str | None:
    """A write's `asset` as `resolve_listed` resolves it (`api`'s calls blocking or awaitable, as the
    driver's service clients are): None when it needs no reading (a built-in symbol, an address, none)."""
    if asset is None or strategy_id is None or not worth_asking(asset):
        return None
    from yieldcli.chain.rpc.adapter import Rpc  # solders: only when a symbol is asked about

    body = api.serve(Endpoints.strategy_info, strategy_id)
    body = await body if inspect.isawaitable(body) else body
    async with Rpc(settings.rpc_url, timeout=settings.timeout) as rpc:
        listed = await learn_tokens(rpc, models.strategy(body).assets)
    return tokens.resolve_asset(asset, "asset", listed)
