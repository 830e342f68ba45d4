"""Read commands: strategy info, positions, balances, earnings, health."""

from typing import Optional

import typer

from yieldcli import tokens
from yieldcli.api import models
from yieldcli.api.pagination import DEFAULT_CONCURRENCY, collect
from yieldcli.commands import options as opt
from yieldcli.commands.context import session_of

strategy_app = typer.Typer(help="Strategies.", no_args_is_help=True)


def _emit(session, out, kind, fetch, parse_item, page, limit, fetch_all, concurrency) -> None:
    from yieldcli.render.progress import page_progress

    with page_progress(session.env, f"fetching {kind}", enabled=fetch_all) as progress:
        out.page(collect(kind, fetch, parse_item, page=page, limit=limit, fetch_all=fetch_all,
                         concurrency=concurrency, progress=progress))


def resolve_asset(value: Optional[str]) -> Optional[str]:
    return None if value is None else tokens.resolve_asset(value)


@strategy_app.command("info")
def strategy_info(
    ctx: typer.Context,
    strategy_id: Optional[str] = typer.Argument(None, help="Strategy id (default: --strategy / YIELD_STRATEGY / profile).", show_default=False),
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Show a strategy: name, supported assets and variable APY.

    Example: yield strategy info 43620ba3-354c-456b-aa3c-5bf7fa46a6d4 -o json | jq .apy
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    strategy_id = session.strategy(strategy_id)
    body = session.api().strategy_info(strategy_id)
    out.object("strategy", body, models.strategy(body))


def positions(
    ctx: typer.Context,
    wallet: opt.Wallet = None,
    strategy: opt.Strategy = None,
    asset: opt.Asset = None,
    sort_by: opt.SortBy = None,
    order: opt.SortOrder = None,
    page: opt.Page = None,
    limit: opt.Limit = None,
    all_: opt.All = False,
    concurrency: opt.Concurrency = DEFAULT_CONCURRENCY,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Show a wallet's positions in a strategy: principal, value and yield after fees.

    Example: yield positions --strategy ID --all -o json | jq '.data[] | {token_symbol, yield_earned}'
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    wallet = session.wallet(wallet)
    strategy_id = session.strategy(strategy)
    mint = resolve_asset(asset)
    query = {"asset": mint, "sort_by": sort_by, "sort_order": order.value if order else None}

    def fetch(page_no, size):
        return session.api().positions(wallet, strategy_id, **query, page=page_no, limit=size)

    _emit(session, out, "positions", fetch, models.position, page, limit, all_, concurrency)


def balances(
    ctx: typer.Context,
    wallet: opt.Wallet = None,
    asset: opt.Asset = None,
    sort_by: opt.SortBy = None,
    order: opt.SortOrder = None,
    page: opt.Page = None,
    limit: opt.Limit = None,
    all_: opt.All = False,
    concurrency: opt.Concurrency = DEFAULT_CONCURRENCY,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Show a wallet's token balances: the wallet part and the part in positions.

    Example: yield balances WALLET --all -o json | jq '.data[] | {token_symbol, total_balance}'
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    wallet = session.wallet(wallet)
    mint = resolve_asset(asset)
    query = {"asset": mint, "sort_by": sort_by, "sort_order": order.value if order else None}

    def fetch(page_no, size):
        return session.api().balances(wallet, **query, page=page_no, limit=size)

    _emit(session, out, "balances", fetch, models.balance, page, limit, all_, concurrency)


def earnings(
    ctx: typer.Context,
    wallet: opt.Wallet = None,
    fund: Optional[str] = typer.Option(None, "--fund", help="Only this fund id.", show_default=False),
    page: opt.Page = None,
    limit: opt.Limit = None,
    all_: opt.All = False,
    concurrency: opt.Concurrency = DEFAULT_CONCURRENCY,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Show position value and yield earned per fund.

    Example: yield earnings WALLET --all -o csv > earnings.csv
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    wallet = session.wallet(wallet)

    def fetch(page_no, size):
        return session.api().earnings(wallet, fund_id=fund, page=page_no, limit=size)

    _emit(session, out, "earnings", fetch, models.yield_record, page, limit, all_, concurrency)


def health(ctx: typer.Context, output: opt.Output = None, json_: opt.Json = False) -> None:
    """Check that the service answers.

    Example: yield health -o json
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    out.object("health", session.api().health())
