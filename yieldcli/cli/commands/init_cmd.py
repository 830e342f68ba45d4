"""`yield init`: from nothing to a checked setup against the real service, at a terminal or in a script.

Four steps, each skipped when already done: the API key (kept in the OS keyring; `YIELD_API_KEY`
when set is used as it is), the strategy id (checked against the service, written to the config
file), the Solana RPC (written too), then `doctor`'s checks, whose outcome is the exit code. At a
terminal each missing answer is asked for; a script passes the same answers as flags
(`--api-key-stdin`, `--strategy`, `-u`) and is never prompted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import typer

from yieldcli import config as cfg
from yieldcli import secrets
from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.cli.render.output import Output
from yieldcli.cli.session import rpc_url_of, sandbox_state_path
from yieldcli.errors import UsageError

if TYPE_CHECKING:
    from yieldcli.cli.session import Session

# What a newcomer needs to know before the first question (the manual's configuration page, "API key", says it too).
WHERE_FROM = (
    "Your API key and strategy id come from the service's customer portal: a strategy\n"
    "is the yield product your users deposit into (its id is a UUID), and the key is\n"
    "made there for it. The key is kept in your OS keyring, never in a file."
)
RPC_DEFAULT = "mainnet-beta"


def init(
    ctx: typer.Context,
    api_key_stdin: bool = typer.Option(
        False, "--api-key-stdin", help="Read the API key from standard input instead of a prompt."
    ),
    strategy: opt.Strategy = None,
    url: opt.RpcUrl = None,
    keypair: opt.Keypair = None,
) -> None:
    """Set up yield for the real service: API key, strategy, RPC, then doctor's checks.

    Each step already done is kept; at a terminal what is missing is asked for, in a script it is
    given as flags. Exit 0 when doctor finds nothing failing.

    \b
    Example: yield init
    Script:  yield init --api-key-stdin --strategy ID -u mainnet-beta < key.txt
    """
    session = session_of(ctx)
    if session.options.sandbox:
        raise UsageError("--sandbox needs no setup", hint="drop --sandbox to set up the real service")
    session.creates_profile = True  # the profile named is the one being set up
    say = Output(session.env, "table", color=False, quiet=session.options.quiet)
    _api_key(session, say, api_key_stdin)
    # Every setting given on the command line is kept, the global -u/-k/--api-url before `init` too:
    # the next command reads the config file, not this command line.
    changes = {
        "api_url": _given(session, "api_url", session.options.api_url),
        "strategy": _strategy(session, say, strategy),
        "rpc_url": _rpc(session, say, url if url is not None else session.options.url),
        "keypair": _given(session, "keypair", keypair if keypair is not None else session.options.keypair),
    }
    _write(session, say, {k: v for k, v in changes.items() if v is not None})
    from yieldcli.cli.checks.run import check_setup

    say.info("\nChecking the setup (yield doctor):")
    check_setup(session, url=None, keypair_path=None)
    # Reached only when no check failed (a failure ends the run with its error line): the verdict is the last word.
    say.info("Ready: `yield doctor` found nothing failing; try `yield strategy info` and `yield positions WALLET`.")


def _given(session: Session, key: str, value: Optional[str]) -> Optional[str]:
    """A setting given as a flag, to write (None: not given, or the config file says it already)."""
    if value is None:
        return None
    written = session.settings.config.lookup(key, session.settings.profile.value)
    return None if written is not None and written[0] == value else value


def _api_key(session: Session, say: Output, from_stdin: bool) -> None:
    """A key from YIELD_API_KEY, or one stored already, or one read now and stored."""
    from yieldcli.cli.api_key_input import read_key, store_key

    found, _ = secrets.find_api_key(session.env, session.profile)  # a malformed one is refused here
    if found is not None and found.source == "env":
        if from_stdin:
            raise UsageError(
                f"{cfg.API_KEY_ENV} is set: it is the key used",
                hint=f"unset {cfg.API_KEY_ENV}, or drop --api-key-stdin",
            )
        say.info(f"API key: {secrets.mask(found.value)} from {cfg.API_KEY_ENV} (nothing stored)")
        return
    if found is not None and not from_stdin:
        say.info(f"API key: {secrets.mask(found.value)} already in the {found.location}")
        return
    if not from_stdin and session.env.interactive:
        say.info(WHERE_FROM)
    store_key(session, read_key(session, from_stdin))


def _strategy(session: Session, say: Output, flag: Optional[str]) -> Optional[str]:
    """The strategy id to write (None: the one in effect stays), checked against the service."""
    current = session.settings.get("strategy")
    value, given_as = cfg.not_empty(flag, "--strategy"), "--strategy"
    if value is None and session.env.interactive:
        value, given_as = _ask("Strategy id (from the customer portal)", current.value), "the prompt"
    if value is None and not current.value:
        raise UsageError("no strategy id", hint="pass --strategy ID: the id of your strategy in the customer portal")
    checked = session.strategy(value, given_as=given_as)
    body = session.client().answer("strategy", checked)  # a wrong id ends here, saying where it came from
    name = body.get("strategy_name") if isinstance(body, dict) else None
    say.info(f"Strategy: {checked}" + (f" ({name})" if name else ""))
    return _given(session, "strategy", value)


def _rpc(session: Session, say: Output, flag: Optional[str]) -> Optional[str]:
    """The RPC to write (None: the one in effect stays): a moniker or an http(s) URL."""
    current = session.settings.get("rpc_url")
    # A service that is this machine's `yield sandbox serve` has its chain beside it: that RPC is the default.
    default = _served_sandbox_rpc(session) or RPC_DEFAULT
    value = flag
    if value is None and session.env.interactive:
        value = _ask("Solana RPC URL or moniker (mainnet-beta, devnet, ...)", current.value or default)
    if value is None and not current.value:
        value = default  # written, so the choice is explicit in the config file
    shown = str(value or current.value)
    rpc_url_of(shown, "-u/--url")
    say.info(f"Solana RPC: {shown}")
    return _given(session, "rpc_url", value)


def _served_sandbox_rpc(session: Session) -> Optional[str]:
    from yieldcli.sandbox.keyfile import served_rpc_url

    api_url = session.settings.get("api_url").value
    return served_rpc_url(sandbox_state_path(session.env).parent, str(api_url)) if api_url else None


def _ask(question: str, default: Optional[str]) -> str:
    """One answer at a terminal; Enter keeps the default shown in brackets."""
    if default:
        return str(typer.prompt(question, default=str(default), err=True)).strip()
    return str(typer.prompt(question, err=True)).strip()


def _write(session: Session, say: Output, changes: dict[str, str]) -> None:
    """The answers into the config file, each checked as `config set` checks it."""
    if not changes:
        return
    from yieldcli.cli.config_values import check_value, target_profile

    checked = {key: check_value(key, value) for key, value in changes.items()}
    profile = target_profile(session)
    config = session.settings.config

    def change(latest: cfg.ConfigFile) -> bool:
        for key, value in checked.items():
            latest.set(key, value, profile)
        return True

    config.update(change)
    session.forget_settings()  # doctor reads what was just written
    say.info(f"Saved {', '.join(checked)} in {config.path}" + (f" [profiles.{profile}]" if profile else ""))
