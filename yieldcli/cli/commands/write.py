"""The write commands, one per action row (`yieldcli.client.actions`): `yield deposit`, `yield withdraw`,
`yield close-account`, and any row added there. Each asks the service for a transaction, then reviews,
signs or sends it through `Client.transact`.

A command is made from its row: the flags every write takes (asset, amount when the row takes one,
wallet, payer, strategy, token account, `--account` when the fund account may be named by its address),
the row's own options (`Option`: a flag, an on/off switch, or an address), and the transaction flags
(`options.with_tx_options`). Typer reads the signature made here as it reads a written one.
"""

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from yieldcli import tokens
from yieldcli.addresses import check_pubkey
from yieldcli.amounts import Amount
from yieldcli.cli import flags as opt
from yieldcli.cli import token_names
from yieldcli.cli.command_context import session_of
from yieldcli.client import listed_tokens
from yieldcli.client.actions import ACTIONS, Action, Option
from yieldcli.errors import UsageError

if TYPE_CHECKING:
    from yieldcli.cli.session import Session
    from yieldcli.cli.writing.flow import TxOptions
    from yieldcli.client.writes import Write

AmountOpt = Annotated[
    Optional[str],
    typer.Option("--amount", help="Amount in token units (1.5), or base units with --raw.", show_default=False),
]
AllOpt = Annotated[bool, typer.Option("--all", help="Everything: the whole balance (deposit) or position (withdraw).")]
RawOpt = Annotated[bool, typer.Option("--raw", help="--amount is in base units (the token's smallest unit).")]
AccountOpt = Annotated[
    Optional[str], typer.Option("--account", help="The fund account, by its address.", show_default=False)
]
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


def write_of(session: "Session", tx: "TxOptions", action: Action, flags: dict[str, Any]) -> "Write":
    """The flags of `action`'s command, checked (refusals that need no request first), as the
    library's `Write`: an unknown mint's decimals then come from its mint account on chain, never from
    the service (`yieldcli.client.writes.order_of`)."""
    from yieldcli.client.writes import Write

    asset, strategy = flags.get("asset"), flags.get("strategy")
    amount, all_, raw = flags.get("amount"), bool(flags.get("all_")), bool(flags.get("raw"))
    if action.amount:
        check_required(asset, amount, all_)
    tx.check(session, always_confirm=action.asks_always)
    if action.amount:
        check_amount_flags(amount, all_, raw)
    account = _pubkey_option(flags.get("account"), "--account")
    if account is not None and (asset is not None or strategy is not None):
        raise UsageError("use either --account, or --strategy with --asset (and optionally --wallet)")
    if account is None and asset is None:
        raise UsageError("name the fund account with --account, or give --strategy and --asset")
    if asset is not None:
        # A typo is refused now, before anything else is asked. A listed token's symbol is then resolved
        # by the write itself (`client.driver.ready`), whose check holds the mint's metadata, as it reads
        # it, to that symbol; no listed token is SOL.
        resolved = token_names.resolve_asset(session, asset, strategy=strategy, rpc_flag=tx.rpc_url)
        mint = None if listed_tokens.worth_asking(asset) else resolved
        meaningless = [
            o.flag for o in action.options if o.sol_only and flags.get(o.keyword) and mint != tokens.WSOL_MINT
        ]
        if meaningless:
            raise UsageError(f"{', '.join(meaningless)} is for SOL only, not {asset}", hint="leave it out")
    token_account = _pubkey_option(flags.get("token_account"), "--token-account")
    strategy_id = session.strategy(strategy) if account is None else None
    payer = _pubkey_option(flags.get("payer"), "--payer")
    wallet: str = session.wallet(flags.get("wallet"), signing=True, keypair_flag=tx.keypair, name="--wallet")
    own = {
        o.keyword: _pubkey_option(flags[o.keyword], o.flag) if o.form == "address" else flags[o.keyword]
        for o in action.options
    }
    return Write(
        action,
        asset,
        strategy_id,
        amount=None if raw else amount,
        raw=Amount.parse_raw(amount, 0).raw if raw and amount is not None else None,
        everything=action.amount and amount is None,
        wallet=wallet,
        payer=payer or wallet,
        token_account=token_account,
        position=account,
        options=own,
        amount_name="--amount",
    )


def _option_parameter(option: Option) -> inspect.Parameter:
    """An action's own option as the command's flag."""
    annotation: Any
    if option.form == "flag":
        annotation, default = Annotated[bool, typer.Option(option.flag, help=option.help)], False
    elif option.form == "switch":
        no = "--no-" + option.flag[2:]
        annotation = Annotated[
            Optional[bool], typer.Option(f"{option.flag}/{no}", help=option.help, show_default=False)
        ]
        default = None
    else:
        annotation = Annotated[Optional[str], typer.Option(option.flag, help=option.help, show_default=False)]
        default = None
    return inspect.Parameter(option.keyword, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def command_for(action: Action) -> Callable[..., None]:
    """`yield ACTION`: its flags from the row, its run through the library's write path."""

    def command(ctx: typer.Context, **flags: Any) -> None:
        from yieldcli.cli.writing.flow import run

        tx: TxOptions = flags.pop("tx")
        session = session_of(ctx)
        out = session.output(flags.pop("output"), flags.pop("json_"))
        run(session, out, tx, write_of(session, tx, action, flags))

    def keyword(name: str, annotation: Any, default: Any) -> inspect.Parameter:
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)

    parameters = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
        keyword("asset", RequiredAsset, None),
    ]
    if action.amount:
        parameters += [
            keyword("amount", AmountOpt, None),
            keyword("all_", AllOpt, False),
            keyword("raw", RawOpt, False),
        ]
    if action.by_position:
        parameters.append(keyword("account", AccountOpt, None))
    parameters += [
        keyword("wallet", WalletOpt, None),
        keyword("payer", PayerOpt, None),
        keyword("strategy", opt.Strategy, None),
        keyword("token_account", TokenAccountOpt, None),
        *(_option_parameter(o) for o in action.options),
        keyword("output", opt.Output, None),
        keyword("json_", opt.Json, False),
        keyword("tx", "TxOptions", None),
    ]
    # inspect.signature (and so typer) reads __signature__ first; typeshed's functions do not declare it.
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__name__ = action.method
    asks = " Asks on a terminal; needs --yes off one." if action.asks_always else ""
    amount = " --amount 10" if action.amount else ""
    command.__doc__ = (
        f"{action.help} Review the transaction, then --sign or --send it.{asks}\n\n"
        f"Example: yield {action.name} --asset USDC{amount} --send --yes"
    )
    return opt.with_tx_options()(command)


def __getattr__(name: str) -> Callable[..., None]:
    """`write.deposit`, `write.close-account`: each row's command, made when first asked (`cli/app.py`)."""
    action = ACTIONS.get(name) or next((a for a in ACTIONS.values() if a.method == name), None)
    if action is None:
        raise AttributeError(name)
    return command_for(action)
