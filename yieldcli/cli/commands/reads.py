"""Read commands: strategy info, positions, balances, earnings, health, and one for each listing a
resource descriptor gives a command (`yieldcli.cli.resources`). Each parses its flags, asks the
library's `Client` (`Session.client()`), and draws what it answered."""

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Optional

import typer

from yieldcli import tokens
from yieldcli.api.limits import DEFAULT_CONCURRENCY
from yieldcli.api.pagination import PageResult
from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.errors import UsageError, YieldError

if TYPE_CHECKING:
    from yieldcli.cli.render.output import Output
    from yieldcli.cli.session import Session

strategy_app = opt.command_group("Read a strategy: its name, supported assets and variable APY.")


def _wallets(session: "Session", wallet: Optional[str], wallets_file: Optional[str]) -> list[str] | str:
    """The one wallet (an argument or the keypair's), or the validated list from --wallets-file."""
    if wallets_file is None:
        return session.wallet(wallet)
    if wallet is not None:
        raise UsageError("give a WALLET or --wallets-file, not both")
    from yieldcli.wallets import read_wallets_file

    return read_wallets_file(wallets_file, session.env.stdin)


# Formats a script reads row by row: without --page or --limit they hold the whole list, as --all.
WHOLE_LIST_FORMATS = ("ndjson", "csv")


def _follows_every_page(out: "Output", page: Optional[int], limit: Optional[int], fetch_all: bool) -> bool:
    """--all, or a stream format with no page asked for: a script piping rows must not lose any."""
    if fetch_all and page is not None:
        raise UsageError("--all and --page cannot be used together", hint="--all fetches every page; drop one")
    return fetch_all or (page is None and limit is None and out.mode in WHOLE_LIST_FORMATS)


def _say_if_past_the_last_page(out: "Output", result: PageResult, page: Optional[int]) -> None:
    """An empty page past the last is no error, but a script paging by hand should know (stderr)."""
    if page is None or result.entries:
        return
    last = result.meta().get("total_pages")
    if isinstance(last, int) and page > max(last, 1):
        out.warn(f"page {page} is past the last page of {result.kind} ({last})")


def _say_if_more_pages(out: "Output", kind: str, more: Optional[dict[str, Any]]) -> None:
    """Output that stops before the last page says so on stderr, in one line with the flag that gets
    the rest. A table on a terminal says it in its footer already, on the same screen."""
    if not more or (out.mode == "table" and out.env.stdout_isatty):
        return
    number = int(more.get("page") or 1)
    out.warn(
        f"page {number} of {more.get('total_pages')} ({more.get('total')} {kind} in all): "
        f"--all gets every page, --page {number + 1} the next"
    )


def _emit(
    session: "Session",
    out: "Output",
    kind: str,
    arguments: tuple[Any, ...],
    query: dict[str, Any],
    wallets: list[str] | str,
    page: Optional[int],
    limit: Optional[int],
    fetch_all: bool,
    concurrency: int,
) -> None:
    """One wallet: pages of it (concurrent with --all). A wallets file: every wallet, concurrently.
    The library's listing `kind` (`Client.iter_<kind>`) is asked for the wallet, then `arguments`
    and `query`; the Client parses each item with the listing's model."""
    from yieldcli.cli.render.progress import page_progress

    fetch_all = _follows_every_page(out, page, limit, fetch_all)
    client = session.client()
    pages: dict[str, Any] = {"page": page, "limit": limit, "every": fetch_all, "concurrency": concurrency}

    if isinstance(wallets, str):
        with page_progress(session.env, f"fetching {kind}", enabled=fetch_all) as progress:
            result = client.page_result(kind, wallets, *arguments, **pages, progress=progress, **query)
            _say_if_past_the_last_page(out, result, page)
            more = result.more_pages
            out.page(result, progress)
        _say_if_more_pages(out, kind, more)
        return

    cut: list[str] = []  # wallets whose output stops before their last page

    def noting_cuts(results: "Iterator[tuple[str, PageResult | YieldError]]") -> "Iterator[tuple[str, Any]]":
        for wallet, result in results:
            if isinstance(result, PageResult) and result.more_pages:
                cut.append(wallet)
            yield wallet, result

    with page_progress(session.env, f"fetching {kind} of {len(wallets)} wallets", enabled=True) as progress:
        results = client.each_wallet(kind, wallets, *arguments, **pages, progress=progress, **query)
        failures = out.wallet_pages(kind, noting_cuts(results), progress)
    if cut and not (out.mode == "table" and out.env.stdout_isatty):  # each wallet's footer says it there
        first_cut = next(wallet for wallet in wallets if wallet in set(cut))
        out.warn(
            f"{len(cut)} of {len(wallets)} wallets have more {kind} than shown (first: {first_cut}): "
            "--all gets every page"
        )
    if failures:
        first = failures[0][1]
        first.message = f"{len(failures)} of {len(wallets)} wallets failed (first: {failures[0][0]}: {first.message})"
        raise first


def listing_command(kind: str) -> "Callable[..., None]":
    """`yield KIND [WALLET]`: the listing `kind` of the library's Client (`iter_<kind>`) with paging,
    many wallets and every output format, for a resource whose descriptor asks for one (`command`)."""
    from yieldcli.cli.resources import RESOURCES

    def command(
        ctx: typer.Context,
        wallet: opt.Wallet = None,
        page: opt.Page = None,
        limit: opt.Limit = None,
        all_: opt.All = False,
        concurrency: opt.Concurrency = DEFAULT_CONCURRENCY,
        wallets_file: opt.WalletsFile = None,
        output: opt.Output = None,
        json_: opt.Json = False,
    ) -> None:
        session = session_of(ctx)
        out = session.output(output, json_)
        wallets = _wallets(session, wallet, wallets_file)
        _emit(session, out, kind, (), {}, wallets, page, limit, all_, concurrency)

    command.__doc__ = RESOURCES[kind].command
    return command


def __getattr__(name: str) -> "Callable[..., None]":
    """The commands made from resource descriptors, by name (as `cli.app` finds every command)."""
    from yieldcli.cli.resources import RESOURCES

    if name in RESOURCES and RESOURCES[name].command:
        return listing_command(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve_asset(session: "Session", value: Optional[str], strategy: Optional[str] = None) -> Optional[str]:
    """A known symbol (the strategy's tokens' included) as its mint, or a mint address; anything else is
    refused (exit 2) with the known symbols: a typo must not read as "no balances" to a script."""
    from yieldcli.cli import token_names

    return None if value is None else token_names.resolve_asset(session, value, strategy=strategy)


def _check_fund(session: "Session", wallets: list[str] | str, fund: str) -> None:
    """A --fund the wallet has no earnings in is refused (exit 2) naming the funds it has, not answered
    with an empty list. Many wallets: a fund some of them lack is no typo, and is not checked."""
    if not isinstance(wallets, str):
        return
    known = {record.fund_id: record.fund_name for record in session.client().iter_earnings(wallets)}
    if fund not in known:
        listed = ", ".join(f"{fid} ({name})" if name else fid for fid, name in sorted(known.items()))
        raise UsageError(
            f"--fund {fund!r}: wallet {wallets} has no earnings in such a fund",
            hint=f"its funds: {listed}" if listed else "it has no earnings in any fund yet",
            kind="usage.fund.unknown",
        )


@strategy_app.command("info")
def strategy_info(
    ctx: typer.Context,
    strategy_id: Optional[str] = typer.Argument(
        None,
        metavar="[STRATEGY_ID]",
        help="Strategy id (default: --strategy / YIELD_STRATEGY / profile).",
        show_default=False,
    ),
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Show a strategy: name, supported assets and variable APY.

    Example: yield strategy info 43620ba3-354c-456b-aa3c-5bf7fa46a6d4 -o json | jq .apy
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    strategy_id = session.strategy(strategy_id, given_as="the command line")
    body = session.client().answer("strategy", strategy_id)
    from yieldcli.cli import token_names
    from yieldcli.cli.resources import RESOURCES

    strategy = RESOURCES["strategy"].model()(body)
    token_names.learn(session, strategy.assets)  # a listed token not built in: named by its own metadata
    out.object("strategy", body, strategy)


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
    wallets_file: opt.WalletsFile = None,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Show a wallet's positions in a strategy: principal, value and yield after fees.

    Example: yield positions --strategy ID --all -o json | jq '.data[] | {token_symbol, yield_earned}'
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    wallets = _wallets(session, wallet, wallets_file)
    strategy_id = session.strategy(strategy)
    mint = resolve_asset(session, asset, strategy_id)
    query = {
        "asset": mint,
        "sort_by": opt.check_sort_by("positions", sort_by),
        "order": order.value if order else None,
    }

    _emit(
        session,
        out,
        "positions",
        (strategy_id,),
        query,
        wallets,
        page,
        limit,
        all_,
        concurrency,
    )


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
    wallets_file: opt.WalletsFile = None,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Show a wallet's token balances: the wallet part and the part in positions.

    \b
    Example: yield balances WALLET -o csv > balances.csv
    Many wallets: yield balances --wallets-file wallets.txt -o ndjson
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    wallets = _wallets(session, wallet, wallets_file)
    mint = resolve_asset(session, asset)
    if mint == tokens.WSOL_MINT:
        # Balances list both SOLs, and the service calls both "SOL": say which one this is.
        out.info(
            f"--asset {asset} is wrapped SOL ({tokens.WSOL_MINT}), the token positions hold; "
            f"for native SOL use --asset {tokens.NATIVE_SOL_PSEUDO_MINT}"
        )
    query = {
        "asset": mint,
        "sort_by": opt.check_sort_by("balances", sort_by),
        "order": order.value if order else None,
    }

    _emit(
        session,
        out,
        "balances",
        (),
        query,
        wallets,
        page,
        limit,
        all_,
        concurrency,
    )


def earnings(
    ctx: typer.Context,
    wallet: opt.Wallet = None,
    fund: Optional[str] = typer.Option(None, "--fund", help="Only this fund id.", show_default=False),
    page: opt.Page = None,
    limit: opt.Limit = None,
    all_: opt.All = False,
    concurrency: opt.Concurrency = DEFAULT_CONCURRENCY,
    wallets_file: opt.WalletsFile = None,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Show position value and yield earned per fund.

    Example: yield earnings WALLET --all -o csv > earnings.csv
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    wallets = _wallets(session, wallet, wallets_file)
    if fund is not None:
        _check_fund(session, wallets, fund)

    _emit(
        session,
        out,
        "earnings",
        (),
        {"fund": fund},
        wallets,
        page,
        limit,
        all_,
        concurrency,
    )


def health(ctx: typer.Context, output: opt.Output = None, json_: opt.Json = False) -> None:
    """Check that the service answers.

    Example: yield health -o json
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    out.object("health", session.client().answer("health"))
