"""deposit, withdraw, close-account: ask the service for a transaction, then review, sign, send."""

from typing import TYPE_CHECKING, Annotated, Any, Optional, Union

import typer

from yieldcli import tokens
from yieldcli.addresses import check_pubkey
from yieldcli.amounts import Amount
from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.errors import UsageError

if TYPE_CHECKING:
    from yieldcli.cli.commands.txflow import TxOptions
    from yieldcli.cli.render.output import Output
    from yieldcli.cli.session import Session
    from yieldcli.client.orders import Order
    from yieldcli.client.writes import Move

AmountOpt = Annotated[
    Optional[str],
    typer.Option("--amount", help="Amount in token units (1.5), or base units with --raw.", show_default=False),
]
AllOpt = Annotated[bool, typer.Option("--all", help="Everything: the whole balance (deposit) or position (withdraw).")]
RawOpt = Annotated[bool, typer.Option("--raw", help="--amount is in base units (the token's smallest unit).")]
WalletOpt = Annotated[
    Optional[str],
    typer.Option("--wallet", help="The user's wallet (default: the keypair's public key).", show_default=False),
]
PayerOpt = Annotated[
    Optional[str], typer.Option("--payer", help="Fee payer (default: the wallet).", show_default=False)
]
TokenAccountOpt = Annotated[
    Optional[str],
    typer.Option("--token-account", help="The user's token account (default: the associated one).", show_default=False),
]
RequiredAsset = Annotated[
    Optional[str],
    typer.Option("--asset", help="Asset: a mint address or a known symbol (USDC, SOL, ...).", show_default=False),
]


# The transaction flow (asyncio, solders) is imported when a command runs, not when `yield` starts.


def _pubkey_option(value: Optional[str], flag: str) -> Optional[str]:
    return None if value is None else check_pubkey(value, flag)


def _identity(session: "Session", options: "TxOptions", wallet: Optional[str], payer: Optional[str]) -> tuple[str, str]:
    """The wallet (default: the keypair's public key) and the fee payer (default: the wallet)."""
    payer = _pubkey_option(payer, "--payer")
    wallet_key: str = session.wallet(wallet, signing=True, keypair_flag=options.keypair, name="--wallet")
    return wallet_key, payer or wallet_key


def check_amount_flags(amount: Optional[str], all_: bool, raw: bool) -> None:
    """Refusals that need nothing looked up: run first, before any request."""
    if all_ and amount is not None:
        raise UsageError("--amount and --all exclude each other", hint="give one of them")
    if amount is not None:
        Amount.check_syntax(amount, raw=raw)


def check_required(asset: Optional[str], amount: Optional[str], all_: bool) -> None:
    """Everything missing, said at once: `yield deposit` alone needs --asset and an amount."""
    missing = (["--asset"] if asset is None else []) + (["--amount (or --all)"] if amount is None and not all_ else [])
    if missing:
        raise UsageError("missing " + " and ".join(missing), hint="e.g. --asset USDC --amount 10")


def _transfer_order(
    session: "Session",
    tx: "TxOptions",
    action: str,
    asset: Optional[str],
    amount: Optional[str],
    all_: bool,
    raw: bool,
    token_account: Optional[str],
    strategy: Optional[str],
    wallet: Optional[str],
    payer: Optional[str],
    **flags: Any,
) -> "Move":
    """The flags of a deposit or withdrawal, checked (refusals that need no request first), as the
    library's write: an unknown mint's decimals then come from its mint account on chain, never from
    the service (`yieldcli.client.driver`)."""
    from yieldcli.client.writes import Move

    check_required(asset, amount, all_)
    tx.check(session)
    check_amount_flags(amount, all_, raw)
    assert asset is not None  # check_required refused its absence
    tokens.resolve_asset(asset)
    token_account = _pubkey_option(token_account, "--token-account")
    strategy_id = session.strategy(strategy)
    wallet_key, payer_key = _identity(session, tx, wallet, payer)
    raw_units = Amount.parse_raw(amount, 0).raw if raw and amount is not None else None
    token_units = None if raw else amount
    everything = amount is None
    return Move(
        action,
        asset,
        token_units,
        raw_units,
        everything,
        strategy_id,
        wallet_key,
        payer_key,
        token_account,
        flags,
        "--amount",
    )


def _run_order(session: "Session", out: "Output", tx: "TxOptions", what: "Union[Order, Move]") -> None:
    """Review, sign or send the service's transaction for `what`, through the library's write path."""
    from yieldcli.cli.commands.txflow import run
    from yieldcli.client import driver
    from yieldcli.client.writes import Move

    settings = tx.settings(session)
    api = session.api()
    order = driver.drive(lambda: driver.order_of(api, settings, what)) if isinstance(what, Move) else what
    run(session, out, tx, settings, driver.ready_order(settings, api, order, tx.write(session), tx.limits()))


@opt.with_tx_options()
def deposit(
    ctx: typer.Context,
    asset: RequiredAsset = None,
    amount: AmountOpt = None,
    all_: AllOpt = False,
    raw: RawOpt = False,
    wallet: WalletOpt = None,
    payer: PayerOpt = None,
    strategy: opt.Strategy = None,
    token_account: TokenAccountOpt = None,
    output: opt.Output = None,
    json_: opt.Json = False,
    *,
    tx: "TxOptions",  # the shared transaction flags, from with_tx_options
) -> None:
    """Deposit into a strategy: review the transaction, then --sign or --send it.

    Example: yield deposit --asset USDC --amount 10 --send --yes
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    _run_order(
        session,
        out,
        tx,
        _transfer_order(session, tx, "deposit", asset, amount, all_, raw, token_account, strategy, wallet, payer),
    )


@opt.with_tx_options()
def withdraw(
    ctx: typer.Context,
    asset: RequiredAsset = None,
    amount: AmountOpt = None,
    all_: AllOpt = False,
    raw: RawOpt = False,
    wallet: WalletOpt = None,
    payer: PayerOpt = None,
    strategy: opt.Strategy = None,
    token_account: TokenAccountOpt = None,
    exclude_fees: bool = typer.Option(
        False, "--exclude-fees", help="Receive the full amount; fees come from the yield."
    ),
    create_wsol_ata: Optional[bool] = typer.Option(
        None,
        "--create-wsol-ata/--no-create-wsol-ata",
        help="For SOL: create the wrapped-SOL account if missing (service default: yes).",
        show_default=False,
    ),
    unwrap_wsol: Optional[bool] = typer.Option(
        None,
        "--unwrap-wsol/--no-unwrap-wsol",
        help="For SOL: unwrap to native SOL at the end (service default: no).",
        show_default=False,
    ),
    detect_wsol: bool = typer.Option(
        False, "--detect-wsol", help="For SOL: let the service choose the two flags above."
    ),
    output: opt.Output = None,
    json_: opt.Json = False,
    *,
    tx: "TxOptions",  # the shared transaction flags, from with_tx_options
) -> None:
    """Withdraw from a strategy: review the transaction, then --sign or --send it.

    Example: yield withdraw --asset USDC --all --send --yes
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    order = _transfer_order(
        session,
        tx,
        "withdraw",
        asset,
        amount,
        all_,
        raw,
        token_account,
        strategy,
        wallet,
        payer,
        exclude_fees=exclude_fees,
        create_wsol_ata=create_wsol_ata,
        unwrap_wsol=unwrap_wsol,
        detect_wsol=detect_wsol,
    )
    _run_order(session, out, tx, order)


@opt.with_tx_options()
def close_account(
    ctx: typer.Context,
    account: Optional[str] = typer.Option(None, "--account", help="The fund account to close.", show_default=False),
    wallet: WalletOpt = None,
    strategy: opt.Strategy = None,
    asset: RequiredAsset = None,
    payer: PayerOpt = None,
    recipient: Optional[str] = typer.Option(
        None, "--recipient", help="Who receives the account's rent (default: the wallet).", show_default=False
    ),
    token_account: TokenAccountOpt = None,
    output: opt.Output = None,
    json_: opt.Json = False,
    *,
    tx: "TxOptions",  # the shared transaction flags, from with_tx_options
) -> None:
    """Close a user fund account: what it holds and its rent come back to you. Asks on a terminal; needs --yes off one.

    Example: yield close-account --strategy ID --asset USDC --send --yes
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    tx.check(session, always_confirm=True)
    account = _pubkey_option(account, "--account")
    recipient = _pubkey_option(recipient, "--recipient")
    token_account = _pubkey_option(token_account, "--token-account")
    if account is not None and (asset is not None or strategy is not None):
        raise UsageError("use either --account, or --strategy with --asset (and optionally --wallet)")
    wallet_key, payer_key = _identity(session, tx, wallet, payer)
    mint: Optional[str] = None
    strategy_id: Optional[str] = None
    if account is None:
        if asset is None:
            raise UsageError("name the fund account with --account, or give --strategy and --asset")
        mint = tokens.resolve_asset(asset)
        strategy_id = session.strategy(strategy)
    from yieldcli.client import orders

    order = orders.close_order(
        wallet=wallet_key,
        payer=payer_key,
        strategy_id=strategy_id,
        mint=mint,
        account=account,
        recipient=recipient,
        token_account=token_account,
    )
    _run_order(session, out, tx, order)
