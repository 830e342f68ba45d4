"""`yield doctor`: check a setup end to end, each check ok, warn or fail with a hint.

Exit 0 when nothing fails; otherwise the exit code of the first failure (3 config, 4 auth, 5 service,
6 network). The checks, their order and their drawing are in `yieldcli.cli.checks` (`yield init`
ends with the same).
"""

from __future__ import annotations

import typer

from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of


def doctor(
    ctx: typer.Context,
    url: opt.RpcUrl = None,
    keypair_path: opt.Keypair = None,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Check the setup: config, API key, service, RPC and its cluster, keypair, Solana CLI config.

    Exit 0 when no check fails. Example: yield doctor -o json | jq '.checks[] | select(.status != "ok")'
    """
    # Here, not at the top: `yield --help` imports every command's module for its summary line.
    from yieldcli.cli.checks.run import check_setup

    check_setup(session_of(ctx), url, keypair_path, output, json_)
