"""The root command: global options, the command tree, and the one place errors become exit codes."""

import importlib
import os
import sys
import traceback
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any, Optional

import typer
from typer.core import TyperGroup

from yieldcli.cli.closed_stderr import sturdy
from yieldcli.cli.render.formats import FORMATS, MODES_TEXT
from yieldcli.cli.render.text import wrapped
from yieldcli.errors import ExitCode
from yieldcli.escapes import escaped

if TYPE_CHECKING:
    from typer._click.core import Command, Context

    from yieldcli.cli.cli_errors import Described
    from yieldcli.cli.session import Session

# Every command, and where it lives. A run imports and builds only the command it runs (start-up
# time is a feature: scripts call us in loops and every Tab press starts a process); `--help`
# and completion list them all.
COMMANDS: dict[str, tuple[str, str]] = {
    "positions": ("yieldcli.cli.commands.reads", "positions"),
    "balances": ("yieldcli.cli.commands.reads", "balances"),
    "earnings": ("yieldcli.cli.commands.reads", "earnings"),
    "strategy": ("yieldcli.cli.commands.reads", "strategy_app"),
    "health": ("yieldcli.cli.commands.reads", "health"),
    "init": ("yieldcli.cli.commands.init_cmd", "init"),
    "doctor": ("yieldcli.cli.commands.doctor", "doctor"),
    "tx": ("yieldcli.cli.commands.tx", "tx_app"),
    "nonce": ("yieldcli.cli.commands.nonce_cmd", "nonce_app"),
    "ledger": ("yieldcli.cli.commands.ledger_cmd", "ledger_app"),
    "auth": ("yieldcli.cli.commands.auth", "auth_app"),
    "config": ("yieldcli.cli.commands.config_cmd", "config_app"),
    "sandbox": ("yieldcli.cli.commands.sandbox_cmd", "sandbox_app"),
    "completion": ("yieldcli.cli.commands.completion_cmd", "completion"),
    "mcp": ("yieldcli.cli.commands.mcp_cmd", "mcp_app"),
}
# Command groups whose module is a command of its own, under the group they belong to: each command
# module imports no other (`tests/architecture/test_commands_self_contained.py`), so they meet here.
SUBCOMMANDS: dict[str, dict[str, tuple[str, str]]] = {
    "config": {"trust": ("yieldcli.cli.commands.trust_cmd", "trust_app")},
}


_BUILT: dict[str, "Command"] = {}


def listing_commands() -> dict[str, tuple[str, str]]:
    """The commands made from resource descriptors (`yieldcli.cli.resources`, `command`): a new
    listing needs no line above. Read only to list every command, or for a name not above."""
    from yieldcli.cli.resources import RESOURCES

    made = (name for name, resource in RESOURCES.items() if resource.command and name not in COMMANDS)
    return {name: ("yieldcli.cli.commands.reads", name) for name in made}


WRITES_AFTER = "doctor"  # where the write commands stand in the list of every command


def action_commands() -> dict[str, tuple[str, str]]:
    """The write commands, one per action row (`yieldcli.client.actions`): a new row is a new command.
    Read only to list every command, or for a name not above (a read never loads the rows)."""
    from yieldcli.client.actions import ACTIONS

    return {name: ("yieldcli.cli.commands.write", name) for name in ACTIONS}


def every_command() -> dict[str, tuple[str, str]]:
    """Every command in the order `yield --help` lists them."""
    listed: dict[str, tuple[str, str]] = {}
    for name, where in COMMANDS.items():
        listed[name] = where
        if name == WRITES_AFTER:
            listed.update(action_commands())
    return {**listed, **listing_commands()}


def _where(name: str) -> Optional[tuple[str, str]]:
    return COMMANDS.get(name) or action_commands().get(name) or listing_commands().get(name)


class LazyCommands(TyperGroup):
    """The root group: commands are loaded by name, on demand."""

    def list_commands(self, ctx: "Context") -> list[str]:
        return list(every_command())

    def get_command(self, ctx: "Context", name: str) -> Optional["Command"]:
        if _where(name) is None:
            return None
        if name not in _BUILT:  # asked for twice per run: by the option hoisting, then by click
            _BUILT[name] = self._build(name)
        return _BUILT[name]

    def resolve_command(self, ctx: "Context", args: list[str]) -> tuple[Optional[str], Optional["Command"], list[str]]:
        """A mistyped command gets the closest names (typer's own suggestion sees no lazy commands)."""
        from typer import _click as click

        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.UsageError as exc:
            matches = get_close_matches(args[0], self.list_commands(ctx), n=1) if args else []
            if matches and "Did you mean" not in exc.message:
                exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(repr(m) for m in matches)}?"
            raise

    def invoke(self, ctx: "Context") -> Any:
        try:
            result = super().invoke(ctx)
            ctx.close()  # here rather than after: what closing writes (--jq's results) may meet the pipe too
            return result
        except BrokenPipeError:
            # The reader went away (`yield ... | head -1`): not an error. Caught here because click
            # turns it into exit 1, which the exit codes keep for bugs (docs/manual/exit-codes.md).
            _silence_stdout()
            raise typer.Exit(ExitCode.OK) from None

    @staticmethod
    def _build(name: str) -> "Command":
        found = _where(name)
        assert found is not None  # get_command asked _where first
        module, attribute = found
        target = getattr(importlib.import_module(module), attribute)
        command: Command  # a group for a command group, a plain command otherwise
        if isinstance(target, typer.Typer):
            group = typer.main.get_group(target)
            for sub_name, (sub_module, sub_attribute) in SUBCOMMANDS.get(name, {}).items():
                sub = typer.main.get_group(getattr(importlib.import_module(sub_module), sub_attribute))
                group.add_command(sub, sub_name)
            command = group
        else:
            single = typer.Typer(
                rich_markup_mode=None, add_completion=False, context_settings={"help_option_names": ["-h", "--help"]}
            )
            single.command(name)(target)
            command = typer.main.get_command(single)
        command.name = name
        from yieldcli.cli.help_text import polish

        polish(command)
        return command


app = typer.Typer(
    cls=LazyCommands,
    name="yield",
    help="Work with a Solana yield-strategy service: read strategies, positions, balances and earnings;\n"
    "review, sign and send deposits and withdrawals.\n\nExample: yield --sandbox positions",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # rich-formatted help costs ~75 ms of start-up
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(ctx: typer.Context, value: bool) -> None:
    if value:
        from yieldcli.cli.version import VERBOSE_FLAGS, version_text

        # Eager: answered before -v is parsed, so the line says whether it was there.
        sys.stdout.write(version_text(any(arg in VERBOSE_FLAGS for arg in sys.argv[1:] + list(ctx.args or ()))))
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    profile: Optional[str] = typer.Option(
        None, "--profile", help="Config profile (env YIELD_PROFILE).", show_default=False
    ),
    config: Optional[str] = typer.Option(None, "--config", help="Config file (env YIELD_CONFIG).", show_default=False),
    api_url: Optional[str] = typer.Option(
        None, "--api-url", help="Service base URL (env YIELD_API_URL).", show_default=False
    ),
    timeout: Optional[str] = typer.Option(
        None, "--timeout", help="Seconds per request (default 30).", show_default=False
    ),
    output: Optional[str] = typer.Option(
        None, "--output", "-o", help=f"{MODES_TEXT} (env YIELD_OUTPUT).", show_default=False
    ),
    json_: bool = typer.Option(False, "--json", help="Short for -o json."),
    color: Optional[str] = typer.Option(
        None, "--color", help="auto, always or never (NO_COLOR and FORCE_COLOR are honoured).", show_default=False
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only data and errors."),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Each request and its status on stderr (key redacted); whole reviews."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
    sandbox: bool = typer.Option(False, "--sandbox", help="Use an embedded local sandbox: no key or network needed."),
    no_pager: bool = typer.Option(
        False, "--no-pager", help="Do not page long output on a terminal (env YIELD_PAGER, PAGER)."
    ),
    keypair: Optional[str] = typer.Option(
        None,
        "--keypair",
        "-k",
        help="Keypair file, or - for stdin: the wallet of reads, the signer of writes (env YIELD_KEYPAIR).",
        show_default=False,
    ),
    url: Optional[str] = typer.Option(
        None, "--url", "-u", help="Solana RPC URL or moniker (env YIELD_RPC_URL).", show_default=False
    ),
    jq: Optional[str] = typer.Option(
        None, "--jq", help="Filter the JSON output with a jq expression (strings printed raw).", show_default=False
    ),
    version: bool = typer.Option(
        False,
        "--version",
        callback=_version,
        is_eager=True,
        help="Print the version (with -v: Python, solders, solana-py, platform).",
    ),
) -> None:
    from yieldcli.cli.session import GlobalOptions, Session, check_json_flag
    from yieldcli.environment import Environment

    check_json_flag(json_, output)
    options = GlobalOptions(
        json=json_,
        profile=profile,
        config=config,
        api_url=api_url,
        timeout=timeout,
        output="json" if json_ else output,
        color=color,
        quiet=quiet,
        verbose=verbose,
        debug=debug,
        sandbox=sandbox,
        no_pager=no_pager,
        keypair=keypair,
        url=url,
        jq=jq,
    )
    global _SESSION
    session = _SESSION = Session(Environment(), options)
    ctx.obj = session
    ctx.call_on_close(session.close)


def main(argv: Optional[list[str]] = None) -> None:
    """Run the CLI; every failure ends here as one line on stderr and a documented exit code."""
    from typer import _click as click  # typer vendors click; its exceptions carry click's exit codes

    args = sys.argv[1:] if argv is None else argv
    _forget_session()  # the root command makes this run's; until then an error knows of no session
    from yieldcli.cli.render.ascii_fallback import protect

    protect(sys.stdout)
    protect(sys.stderr)
    sys.stderr = sturdy(sys.stderr)  # full or gone (ENOSPC, EIO, EPIPE): treated as closed, the run goes on
    global _STDERR_COLOR
    _STDERR_COLOR = _stderr_color(args)
    debug = "--debug" in args
    try:
        from yieldcli.cli.argv import hoist_global_options, negative_numbers_as_values

        negative_numbers_as_values()
        command = typer.main.get_command(app)
        from yieldcli.cli.help_text import placeholder

        for param in command.params:  # the root's own options; its commands are polished as built
            if getattr(param, "metavar", "") is None and not getattr(param, "is_flag", True):
                param.metavar = placeholder(param.opts)
        args = hoist_global_options(command, args)
        code = command.main(args=args, prog_name="yield", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        # `yield` or `yield auth` alone: the help is what was asked for.
        sys.stdout.write(exc.ctx.get_help() + "\n")
        sys.exit(ExitCode.OK)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        # The reader went away (`yield ... | head`): not an error worth a message.
        _silence_stdout()
        sys.exit(ExitCode.OK)
    except (Exception, KeyboardInterrupt) as exc:
        from yieldcli.cli.cli_errors import describe_any

        if _SESSION is not None:
            _SESSION.explain(exc)
        _fail(exc, debug, describe_any(exc), args)
    else:
        sys.exit(code if isinstance(code, int) else ExitCode.OK)


_STDERR_COLOR = False  # "error:" in red: set once per run, before anything can fail
_SESSION: Optional["Session"] = None  # this run's, once the root command has made it


def _forget_session() -> None:
    global _SESSION
    _SESSION = None


def end_run() -> None:
    """Forget what a run left behind, for a process that runs several command lines (`entry.call`):
    the session, the embedded sandbox it started (an executable leaves that to its exit: the
    sandbox's thread is a daemon), and the commands built, so that the next run builds its own."""
    global _SESSION, _STDERR_COLOR
    session, _SESSION, _STDERR_COLOR = _SESSION, None, False
    _BUILT.clear()
    sandbox = session._sandbox if session is not None else None
    if sandbox is not None:
        sandbox.stop()


def _stderr_color(args: list[str]) -> bool:
    """Colour on stderr as for stdout: --color, then NO_COLOR / FORCE_COLOR, then whether it is a terminal."""
    from yieldcli.environment import Environment

    choice = "auto"
    for i, arg in enumerate(args):
        if arg == "--color" and i + 1 < len(args):
            choice = args[i + 1]
        elif arg.startswith("--color="):
            choice = arg.split("=", 1)[1]
    env = Environment()
    return env.color_enabled(choice if choice in ("always", "never") else "auto", env.stderr_isatty)


def _errors_as_json(args: list[str]) -> bool:
    """Whether this run's output is JSON: then an error is also written as a JSON object on stderr.

    The session knows once a command asked for its output; before that (a bad flag, a bad config
    file) the command line, YIELD_OUTPUT and whether stdout is a terminal decide, as they do for data.
    """
    if _SESSION is not None and _SESSION.output_mode is not None:
        return FORMATS[_SESSION.output_mode].errors_as_json
    from yieldcli.environment import Environment

    requested: Optional[str] = None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--json":
            requested = "json"
        elif arg in ("-o", "--output") and i + 1 < len(args):
            requested = args[i + 1]
        elif arg.startswith("--output="):
            requested = arg.split("=", 1)[1]
        elif arg.startswith("-o") and len(arg) > 2 and not arg.startswith("--"):
            requested = arg[2:]
    env = Environment()
    requested = requested or os.environ.get("YIELD_OUTPUT") or None
    if requested is None:
        requested = "table" if env.stdout_isatty else "json"  # as `output.resolve_mode` chooses
    found = FORMATS.get(requested.lower())
    return found is not None and found.errors_as_json


def _fail(exc: BaseException, debug: bool, described: "Described", args: list[str]) -> None:
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    line = f"error: {described.message}" + (f" (hint: {described.hint})" if described.hint else "")
    # The message may quote the service or the RPC: every character that could make it read otherwise
    # (a control, a bidirectional override, a zero-width one) is shown as \u{...}; the JSON keeps it raw.
    line = wrapped(escaped(line.replace("\n", " ")), sys.stderr)  # at word boundaries on a terminal
    lines = ["\x1b[31merror:\x1b[0m" + line.removeprefix("error:") if _STDERR_COLOR else line]
    if _errors_as_json(args):
        # After the human line, so a person reads the same first line in every mode and a script
        # parses the last line of stderr: one JSON object.
        import json

        lines.append(json.dumps(described.to_json(), ensure_ascii=False))
    encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
    text = "".join(f"{one}\n" for one in lines)
    # Never lose the message to a stderr that cannot encode it (PYTHONIOENCODING=ascii).
    text = text.encode(encoding, "backslashreplace").decode(encoding)
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # no one can read it: the exit code still says how the run ended
    sys.exit(int(described.code))


def _silence_stdout() -> None:
    from yieldcli.cli.render.output import silence_stdout

    silence_stdout()
