"""Options shared by several commands, spelled and explained the same way everywhere."""

import functools
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, Optional, TypeVar

import typer
from typer._click.core import Context, Parameter
from typer._click.types import ParamType

from yieldcli import numbers
from yieldcli.cli.render.formats import MODES_TEXT
from yieldcli.errors import UsageError
from yieldcli.solana.cluster import DEFAULT_COMMITMENT, DEFAULT_CONFIRM_TIMEOUT

INT32_MAX = 2**31 - 1

R = TypeVar("R")


class WholeNumber(ParamType):
    """A whole number in a range, ASCII digits only (click's INT takes `１０`, `1_0` and `+5`)."""

    name = "integer"

    def __init__(self, minimum: int, maximum: int):
        self.minimum, self.maximum = minimum, maximum

    def convert(self, value: str | int, param: Parameter | None, ctx: Context | None) -> int:
        try:
            return numbers.parse_whole(
                value, name=param.opts[0] if param else "value", minimum=self.minimum, maximum=self.maximum
            )
        except UsageError as exc:
            self.fail(exc.message.split(": ", 1)[-1], param, ctx)


class Seconds(ParamType):
    """A positive number of seconds, ASCII digits only (click's FLOAT takes `nan`, `inf` and `３`)."""

    name = "seconds"

    def convert(self, value: str | int | float, param: Parameter | None, ctx: Context | None) -> float:
        try:
            return numbers.parse_seconds(value, name=param.opts[0] if param else "value")
        except UsageError as exc:
            self.fail(exc.message.split(": ", 1)[-1], param, ctx)


class Order(StrEnum):
    asc = "asc"
    desc = "desc"


Output = Annotated[
    Optional[str],
    typer.Option(
        "--output", "-o", help=f"{MODES_TEXT} (default: table on a terminal, json otherwise).", show_default=False
    ),
]
Json = Annotated[bool, typer.Option("--json", help="Short for -o json.")]
Wallet = Annotated[
    Optional[str],
    typer.Argument(
        metavar="WALLET", help="Wallet address (default: the configured keypair's public key).", show_default=False
    ),
]
Strategy = Annotated[
    Optional[str],
    typer.Option(
        "--strategy", help="Strategy id (default: YIELD_STRATEGY, then the profile's strategy).", show_default=False
    ),
]
Asset = Annotated[
    Optional[str],
    typer.Option(
        "--asset", help="Filter by asset: a mint address or a known symbol (USDC, USDT, SOL, ...).", show_default=False
    ),
]
SortBy = Annotated[
    Optional[str],
    typer.Option(
        "--sort-by",
        help="Field to sort by: balance, decimals, total_balance (balances); balance, apy, decimals, "
        "total_deposited_value, total_position_value, yield_earned (positions).",
        show_default=False,
    ),
]
SortOrder = Annotated[Optional[Order], typer.Option("--order", help="Sort order: asc or desc.", show_default=False)]
Page = Annotated[
    Optional[int],
    typer.Option("--page", click_type=WholeNumber(1, INT32_MAX), help="Page number (1-based).", show_default=False),
]
Limit = Annotated[
    Optional[int],
    typer.Option("--limit", click_type=WholeNumber(1, INT32_MAX), help="Items per page.", show_default=False),
]
All = Annotated[bool, typer.Option("--all", help="Follow every page and return all items.")]
WalletsFile = Annotated[
    Optional[str],
    typer.Option(
        "--wallets-file",
        help="Query every wallet in FILE (one per line, # comments; - for stdin) instead of WALLET.",
        show_default=False,
    ),
]
Concurrency = Annotated[
    int, typer.Option("--concurrency", click_type=WholeNumber(1, 64), help="Pages (or wallets) fetched at once.")
]

# --- transactions -------------------------------------------------------------------------------

Ix = Annotated[bool, typer.Option("--ix", help="Ask for raw instructions (/ix) and build the transaction locally.")]
Sign = Annotated[
    bool,
    typer.Option("--sign", help="Sign (after review) and print the signed transaction; do not send. Not with --send."),
]
Send = Annotated[
    bool, typer.Option("--send", help="Sign, send, and wait for confirmation (it signs: no --sign needed).")
]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before signing (required off a terminal).")]
NoWait = Annotated[bool, typer.Option("--no-wait", help="Print the signature right after sending.")]
NoSimulate = Annotated[bool, typer.Option("--no-simulate", help="Skip the simulation before signing.")]
Commitment = Annotated[str, typer.Option("--commitment", help="processed, confirmed or finalized.")]
# Not --timeout: that is the global seconds per request, accepted before or after any command.
ConfirmTimeout = Annotated[
    float, typer.Option("--confirm-timeout", click_type=Seconds(), help="Seconds to wait for confirmation.")
]
UnsafeAllowMismatch = Annotated[
    bool,
    typer.Option(
        "--unsafe-allow-mismatch",
        help="DANGEROUS: on a terminal, let you sign a transaction that does not do what you asked, "
        "after showing every difference.",
    ),
]
MaxSolCost = Annotated[
    Optional[str],
    typer.Option(
        "--max-sol-cost",
        metavar="SOL",
        help="Most SOL the network fee plus rent for new accounts may take (default 0.01).",
        show_default=False,
    ),
]
PriorityFee = Annotated[
    Optional[str],
    typer.Option(
        "--priority-fee",
        metavar="auto|MICROLAMPORTS",
        help="Priority fee per compute unit: auto (the 75th percentile of recent fees for the accounts written) or "
        "micro-lamports; the compute-unit limit comes from the simulation "
        "(default: YIELD_PRIORITY_FEE, profile, none).",
        show_default=False,
    ),
]
MaxFee = Annotated[
    Optional[int],
    typer.Option(
        "--max-fee",
        metavar="LAMPORTS",
        click_type=WholeNumber(0, 2**64 - 1),
        help="Refuse, before signing, a transaction whose base plus priority fee would pass LAMPORTS "
        "(default: YIELD_MAX_FEE, profile; with auto and no cap, 0.01 SOL of priority fee at most).",
        show_default=False,
    ),
]
NonceAccount = Annotated[
    Optional[str],
    typer.Option(
        "--nonce",
        metavar="ACCOUNT",
        help="Build on this durable-nonce account (implies --ix), so the signed transaction stays valid "
        "until the nonce moves.",
        show_default=False,
    ),
]
NonceAuthority = Annotated[
    Optional[str],
    typer.Option(
        "--nonce-authority",
        metavar="KEYPAIR|PUBKEY",
        help="The nonce's authority: a keypair file to sign with, or a public key that signs later "
        "with `yield tx sign` "
        "(default: the authority the nonce account names, which must be the wallet, the payer or --keypair).",
        show_default=False,
    ),
]
Keypair = Annotated[
    Optional[str],
    typer.Option(
        "--keypair",
        "-k",
        help="Keypair file, - for stdin, or a Ledger key: usb://ledger?key=N/M "
        "(default: YIELD_KEYPAIR, profile, Solana CLI config).",
        show_default=False,
    ),
]
RpcUrl = Annotated[
    Optional[str],
    typer.Option(
        "--url",
        "-u",
        help="Solana RPC URL or moniker: mainnet-beta, devnet, testnet, localhost (m/d/t/l).",
        show_default=False,
    ),
]


def check_sort_by(kind: str, value: Optional[str]) -> Optional[str]:
    """--sort-by: one of the fields `kind` can be sorted by, refused before any request otherwise."""
    from yieldcli.api.sort_fields import SORT_FIELDS

    if value is not None and value not in SORT_FIELDS[kind]:
        raise UsageError(f"invalid --sort-by {value!r} for {kind}", hint="use one of: " + ", ".join(SORT_FIELDS[kind]))
    return value


def with_tx_options(*, exclude: tuple[str, ...] = ()) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Add the flags transaction commands share to a command, handed to it as `tx: TxOptions`.

    Typer reads a command's signature; the decorator extends it, so each flag is declared once
    however many commands take it. `exclude` names flags a command has no use for. The command
    returned takes those flags as keywords instead of `tx`: its parameters are made at run time (a
    ParamSpec cannot remove one keyword and add others), and typer alone calls it; its result is the
    command's.
    """
    import inspect

    shared: list[tuple[str, object, object]] = [
        ("ix", Ix, False),
        ("sign", Sign, False),
        ("send", Send, False),
        ("yes", Yes, False),
        ("no_wait", NoWait, False),
        ("no_simulate", NoSimulate, False),
        ("commitment", Commitment, DEFAULT_COMMITMENT),
        ("timeout", ConfirmTimeout, DEFAULT_CONFIRM_TIMEOUT),
        ("keypair", Keypair, None),
        ("url", RpcUrl, None),
        ("unsafe_allow_mismatch", UnsafeAllowMismatch, False),
        ("max_sol_cost", MaxSolCost, None),
        ("priority_fee", PriorityFee, None),
        ("max_fee", MaxFee, None),
        ("nonce", NonceAccount, None),
        ("nonce_authority", NonceAuthority, None),
        (
            "again",
            Annotated[
                bool, typer.Option("--again", help="Send although an earlier transaction for this wallet landed since.")
            ],
            False,
        ),
    ]
    shared = [entry for entry in shared if entry[0] not in exclude]
    names = [name for name, _, _ in shared]

    def decorate(command: Callable[..., R]) -> Callable[..., R]:
        signature = inspect.signature(command)
        own = [p for p in signature.parameters.values() if p.name != "tx"]
        taken = {p.name for p in own}
        added = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
            for name, annotation, default in shared
            if name not in taken
        ]

        # Any: typer passes each flag's parsed value, of the type its annotation above says.
        def wrapper(*args: Any, **kwargs: Any) -> R:
            from yieldcli.cli.writing.flow import TxOptions
            from yieldcli.client.writes import WriteOptions

            values = {name: kwargs.pop(name) for name in names if name in kwargs and name not in taken}
            write = WriteOptions(
                ix=values.get("ix", False),
                priority_fee=values.get("priority_fee"),
                max_fee=values.get("max_fee"),
                max_sol_cost=_lamports(values.get("max_sol_cost")),
                commitment=values.get("commitment", DEFAULT_COMMITMENT),
                timeout=values.get("timeout", DEFAULT_CONFIRM_TIMEOUT),
                sign=values.get("sign", False),
                send=values.get("send", False),
                wait=not values.get("no_wait", False),
                simulate=not values.get("no_simulate", False),
                again=values.get("again", False),
                unsafe_allow_mismatch=values.get("unsafe_allow_mismatch", False),
            )
            tx = TxOptions(
                write,
                yes=values.get("yes", False),
                keypair=values.get("keypair"),
                rpc_url=values.get("url"),
                nonce=values.get("nonce"),
                nonce_authority=values.get("nonce_authority"),
            )
            return command(*args, tx=tx, **kwargs)

        functools.update_wrapper(wrapper, command)
        # typer resolves every annotation the function carries; `tx`'s type is imported for type checking only.
        wrapper.__annotations__ = {name: hint for name, hint in command.__annotations__.items() if name != "tx"}
        positional = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
        # inspect.signature (and so typer) reads __signature__ first; typeshed's functions do not declare it.
        wrapper.__signature__ = signature.replace(parameters=positional + added)  # type: ignore[attr-defined]
        return wrapper

    return decorate


def _lamports(sol: Optional[str]) -> Optional[int]:
    """--max-sol-cost in SOL, exactly, as lamports."""
    if sol is None:
        return None
    from yieldcli.amounts import Amount

    return Amount.parse(sol, 9, name="--max-sol-cost").raw


def command_group(help: str) -> typer.Typer:
    """A command group that formats help like the root: plain text (rich help costs start-up time)."""
    return typer.Typer(
        help=help, no_args_is_help=True, rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]}
    )
