"""`yield mcp`: serve the library to an agent over MCP (stdio, or streamable HTTP on loopback), and
`yield mcp audit`: print the agent server's audit log and check its hash chain."""

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.config import config_dir, data_dir
from yieldcli.errors import ConfigError, UsageError, YieldError
from yieldcli.files import path_forms, reads_stdin
from yieldcli.urls import url_secrets

if TYPE_CHECKING:
    from yieldcli.cli.session import Session
    from yieldcli.mcp.policy import Policy as PolicyRules
    from yieldcli.mcp.server import Served

mcp_app = typer.Typer(
    help="Serve reads and policy-bound writes to an AI agent over MCP.\n\n"
    "Example: yield mcp --policy ~/.config/yield/mcp-policy.toml",
    invoke_without_command=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

Policy = Annotated[
    Optional[str],
    typer.Option(
        "--policy",
        help="Policy file (default: $XDG_CONFIG_HOME/yield/mcp-policy.toml; none: writes are off).",
        show_default=False,
    ),
]


@mcp_app.callback()
def mcp(
    ctx: typer.Context,
    policy: Policy = None,
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 (a bearer token is printed).")
    ] = False,
    port: Annotated[int, typer.Option("--port", click_type=opt.WholeNumber(1, 65535), help="Port for --http.")] = 8788,
    keypair: opt.Keypair = None,
    url: opt.RpcUrl = None,
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    session = session_of(ctx)
    served = _served(session, policy, keypair, url)
    from yieldcli.mcp import server  # the SDK is imported here, by this command only

    if http:
        server.run_http(served, port)
    else:
        server.run_stdio(served)


@mcp_app.command("audit")
def audit(ctx: typer.Context) -> None:
    """Print the audit log (one JSON entry a line) and check that its keyed chain is whole.

    Example: yield mcp audit | jq -c 'select(.event == "execute")'
    """
    from yieldcli.mcp.audit import default_audit

    env = session_of(ctx).env
    log = default_audit(data_dir(env), config_dir(env))
    # Read once, under the lock (a line cut short is then damage, not an append in flight): what is
    # printed is the very bytes the check passed on, and nothing is printed from a log that failed it.
    with log.locked():
        seen = log.snapshot(locked=True)
        entries = seen.entries
    if seen.problem:
        raise ConfigError(f"the audit log {log.path} was altered: {seen.problem}", kind="config.audit")
    for entry in entries:
        sys.stdout.write(json.dumps(entry, ensure_ascii=False) + "\n")
    sys.stderr.write(f"{len(entries)} entries; keyed hash chain intact and as long as its anchor ({log.path})\n")


def _served(
    session: "Session", policy_flag: Optional[str], keypair_flag: Optional[str], url_flag: Optional[str]
) -> "Served":
    from yieldcli import Client
    from yieldcli.client.profile import write_defaults
    from yieldcli.mcp.audit import default_audit
    from yieldcli.mcp.policy import default_policy_path
    from yieldcli.mcp.server import Served

    if keypair_flag is not None and reads_stdin(keypair_flag):
        raise UsageError("yield mcp speaks MCP on standard input: give the keypair as a file")
    policy_path = Path(policy_flag).expanduser() if policy_flag else default_policy_path(config_dir(session.env))
    api_url, api_key = session.service()
    keypair = session.keypair_source(keypair_flag).value
    defaults = write_defaults(session.settings)  # as the command line's writes and `Client.from_profile` read them
    client = Client(
        api_url,
        api_key,
        timeout=session.timeout(),
        strategy=session.strategy(None),
        rpc_url=session.rpc_url(url_flag),
        keypair=str(keypair),
        strategy_program=defaults.strategy_program,
        priority_fee=defaults.priority_fee,
        max_fee=defaults.max_fee,
    )
    policy = _policy(client, policy_path, required=policy_flag is not None)
    wallet = session.wallet(None, signing=True, keypair_flag=keypair_flag)
    audit = default_audit(data_dir(session.env), config_dir(session.env))
    audit.check_places()
    hidden = (*url_secrets(api_url), *url_secrets(session.rpc_url(url_flag)), *path_forms(str(keypair)))
    return Served(client, wallet, policy, audit, secrets=(api_key,), hidden=hidden)


def _policy(client: Any, path: Path, *, required: bool) -> "PolicyRules":
    """The policy; one naming a token that is not built in has the strategy's tokens learned from the chain
    first (a listed token is named by its own metadata), and is refused as it was when that fails."""
    from yieldcli.mcp.policy import UNKNOWN_ASSET, load_policy

    try:
        return load_policy(path, required=required)
    except ConfigError as exc:
        if exc.kind != UNKNOWN_ASSET:
            raise
        try:
            client.learn_tokens(client.strategy().assets)
        except YieldError:
            raise exc from None
    return load_policy(path, required=required)
