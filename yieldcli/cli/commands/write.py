"""deposit, withdraw, close-account: ask the service for a transaction, then review, sign, send."""

from typing import Annotated, Any, NamedTuple, Optional

import typer

from yieldcli import tokens
from yieldcli.addresses import check_pubkey
from yieldcli.amounts import Amount
from yieldcli.cli.commands import options as opt
from yieldcli.cli.commands.context import session_of
from yieldcli.errors import UsageError

AmountOpt = Annotated[Optional[str], typer.Option("--amount", help="Amount in token units (1.5), or base units with --raw.", show_default=False)]
AllOpt = Annotated[bool, typer.Option("--all", help="Everything: the whole balance (deposit) or position (withdraw).")]
RawOpt = Annotated[bool, typer.Option("--raw", help="--amount is in base units (the token's smallest unit).")]
WalletOpt = Annotated[Optional[str], typer.Option("--wallet", help="The user's wallet (default: the keypair's public key).", show_default=False)]
PayerOpt = Annotated[Optional[str], typer.Option("--payer", help="Fee payer (default: the wallet).", show_default=False)]
TokenAccountOpt = Annotated[Optional[str], typer.Option("--token-account", help="The user's token account (default: the associated one).", show_default=False)]
RequiredAsset = Annotated[Optional[str], typer.Option("--asset", help="Asset: a mint address or a known symbol (USDC, SOL, ...).", show_default=False)]


# The transaction flow (asyncio, solders) is imported when a command runs, not when `yield` starts.


def _pubkey_option(value: Optional[str], flag: str) -> Optional[str]:
    return None if value is None else check_pubkey(value, flag)


def _identity(session, options, wallet: Optional[str], payer: Optional[str]) -> tuple[str, str]:
    """The wallet (default: the keypair's public key) and the fee payer (default: the wallet)."""
    payer = _pubkey_option(payer, "--payer")
    wallet = session.wallet(wallet, signing=True, keypair_flag=options.keypair, name="--wallet")
    return wallet, payer or wallet


def check_amount_flags(amount: Optional[str], all_: bool, raw: bool) -> None:
    """Refusals that need nothing looked up: run first, before any request."""
    if all_ and amount is not None:
        raise UsageError("--amount and --all exclude each other", hint="give one of them")
    if amount is not None:
        Amount.check_syntax(amount, raw=raw)


def _amount(session, tx, mint: str, wallet: str, amount: Optional[str], raw: bool) -> Optional[Amount]:
    """Exact base units: positive, within u64, no more fraction digits than the mint has, never a float."""
    if amount is None:
        return None
    if raw:  # the mint's decimals only say how the amount reads; base units need none
        known = tokens.by_mint(mint)
        return Amount.parse_raw(amount, known.decimals if known else 0)
    return Amount.parse(amount, decimals_of(session, tx, mint, wallet))


def decimals_of(session, tx, mint: str, wallet: str) -> int:
    """The mint's decimals: the known tokens, else the mint account on chain (the RPC of -u, the
    profile or the sandbox), else, with no RPC answering, the service's balance data."""
    from yieldcli.client_writes import decimals_of_mint

    try:
        return decimals_of_mint(mint, session.rpc_url(tx.rpc_url), session.timeout(),
                                lambda: session.api().balances(wallet, asset=mint))
    except UsageError as exc:
        if exc.kind == "usage.amount":  # nowhere to read them from
            raise UsageError(f"unknown mint {mint}: its decimals are not known, so --amount cannot be converted",
                             hint="pass the amount in base units with --raw") from None
        raise


def _obtainer(session, path: str, params: dict[str, Any], tx, payer: str):
    """How to get the transaction: the library's, except on a durable nonce (--nonce), built here."""
    from yieldcli.chain.service_transactions import from_service

    if tx.ix and tx.nonce is not None:
        from yieldcli.chain.transact import TransactionToReview

        async def on_nonce(rpc) -> TransactionToReview:
            from solders.pubkey import Pubkey

            from yieldcli.cli.commands.nonce_cmd import build_on_nonce_account

            body = session.api().post(f"{path}/ix", params)
            unsigned, tables = await build_on_nonce_account(rpc, body, Pubkey.from_string(payer), tx)
            # No block-height deadline: it lives as long as its nonce.
            return TransactionToReview(unsigned, None, tables, service_answer=body)

        return on_nonce
    return from_service(lambda where, body: session.api().post(where, body), path, params, payer, ix=tx.ix)


class TransferOrder(NamedTuple):
    """A deposit or withdrawal, checked and resolved before anything is requested."""

    mint: str
    token_account: Optional[str]
    strategy_id: str
    wallet: str
    payer: str
    amount: Optional[Amount]  # None: --all


def check_required(asset: Optional[str], amount: Optional[str], all_: bool) -> None:
    """Everything missing, said at once: `yield deposit` alone needs --asset and an amount."""
    missing = (["--asset"] if asset is None else []) + (["--amount (or --all)"] if amount is None and not all_ else [])
    if missing:
        raise UsageError("missing " + " and ".join(missing), hint="e.g. --asset USDC --amount 10")


def _transfer_order(session, tx, asset, amount, all_, raw, token_account, strategy, wallet, payer) -> TransferOrder:
    check_required(asset, amount, all_)
    tx.check(session)
    check_amount_flags(amount, all_, raw)
    mint = tokens.resolve_asset(asset)
    token_account = _pubkey_option(token_account, "--token-account")
    strategy_id = session.strategy(strategy)
    wallet_key, payer_key = _identity(session, tx, wallet, payer)
    return TransferOrder(mint, token_account, strategy_id, wallet_key, payer_key, _amount(session, tx, mint, wallet_key, amount, raw))


def _run_transfer_order(session, out, tx, action: str, path: str, order: TransferOrder, extra: dict[str, Any]) -> None:
    from yieldcli.chain.transact import UserRequest
    from yieldcli.cli.commands.txflow import run

    params = {
        "strategy_id": order.strategy_id, "base_asset": order.mint, "user_key": order.wallet, "payer_key": order.payer,
        "user_token_account": order.token_account, **extra,
        **({"all": True} if order.amount is None else {"amount": order.amount.raw}),
    }
    request = UserRequest(action, order.payer, {order.wallet, order.payer}, order.wallet, order.strategy_id, order.mint,
                          amount=None if order.amount is None else order.amount.raw,
                          exclude_fees=bool(extra.get("exclude_fees")), unwrap=bool(extra.get("unwrap_wsol_ata")))
    _with_nonce_authority(session, tx, request)
    run(session, out, tx, request, _obtainer(session, path, params, tx, order.payer), needs_rpc=tx.ix)


def _with_nonce_authority(session, tx, request) -> None:
    """--nonce-authority: a public key is a signer named to sign later; a keypair file signs now too."""
    if tx.nonce_authority is None:
        return
    from yieldcli.cli.commands.nonce_cmd import nonce_authority_signer

    named, keypair = nonce_authority_signer(session, tx.nonce_authority)
    tx.nonce_authority = named
    request.named_signers.add(named)
    if keypair is not None:
        tx.extra_signers.append(keypair)


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
    tx=None,  # the shared transaction flags, from with_tx_options
) -> None:
    """Deposit into a strategy: review the transaction, then --sign or --send it.

    Example: yield deposit --asset USDC --amount 10 --send --yes
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    order = _transfer_order(session, tx, asset, amount, all_, raw, token_account, strategy, wallet, payer)
    _run_transfer_order(session, out, tx, "deposit", "/deposit", order, {})


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
    exclude_fees: bool = typer.Option(False, "--exclude-fees", help="Receive the full amount; fees come from the yield."),
    create_wsol_ata: Optional[bool] = typer.Option(None, "--create-wsol-ata/--no-create-wsol-ata", help="For SOL: create the wrapped-SOL account if missing (service default: yes).", show_default=False),
    unwrap_wsol: Optional[bool] = typer.Option(None, "--unwrap-wsol/--no-unwrap-wsol", help="For SOL: unwrap to native SOL at the end (service default: no).", show_default=False),
    detect_wsol: bool = typer.Option(False, "--detect-wsol", help="For SOL: let the service choose the two flags above."),
    output: opt.Output = None,
    json_: opt.Json = False,
    tx=None,  # the shared transaction flags, from with_tx_options
) -> None:
    """Withdraw from a strategy: review the transaction, then --sign or --send it.

    Example: yield withdraw --asset USDC --all --send --yes
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    order = _transfer_order(session, tx, asset, amount, all_, raw, token_account, strategy, wallet, payer)
    flags = {"exclude_fees": exclude_fees or None, "create_wsol_ata": create_wsol_ata,
             "unwrap_wsol_ata": unwrap_wsol, "detect_wsol_ata": detect_wsol or None}
    _run_transfer_order(session, out, tx, "withdraw", "/withdraw", order, flags)


@opt.with_tx_options()
def close_account(
    ctx: typer.Context,
    account: Optional[str] = typer.Option(None, "--account", help="The fund account to close.", show_default=False),
    wallet: WalletOpt = None,
    strategy: opt.Strategy = None,
    asset: RequiredAsset = None,
    payer: PayerOpt = None,
    recipient: Optional[str] = typer.Option(None, "--recipient", help="Who receives the account's rent (default: the wallet).", show_default=False),
    token_account: TokenAccountOpt = None,
    output: opt.Output = None,
    json_: opt.Json = False,
    tx=None,  # the shared transaction flags, from with_tx_options
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
        identity = {"user_pubkey": wallet_key, "strategy_id": strategy_id, "mint": mint}
    else:
        identity = {"user_account": account}
    params = {**identity, "payer": payer_key, "funds_recipient": recipient, "user_token_account": token_account}
    from yieldcli.chain.transact import UserRequest
    from yieldcli.cli.commands.txflow import run

    request = UserRequest("close-account", payer_key, {wallet_key, payer_key}, wallet_key, strategy_id, mint, funds_recipient=recipient)
    _with_nonce_authority(session, tx, request)
    run(session, out, tx, request, _obtainer(session, "/close-user-account", params, tx, payer_key), needs_rpc=tx.ix)
