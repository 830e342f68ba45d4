"""`yield doctor`: check a setup end to end, each check ok, warn or fail with a hint.

Exit 0 when nothing fails; otherwise the exit code of the first failure (3 config, 4 auth, 5 service,
6 network). The checks are in `doctor_checks` (config, API key, service, keypair, Solana CLI config)
and `doctor_rpc` (the RPC, its cluster and the strategy program); here they are run in order and drawn.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import typer

from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.cli.render.text import printable

if TYPE_CHECKING:
    from yieldcli.cli.commands.doctor_checks import Check
    from yieldcli.cli.render.output import Output


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
    from yieldcli.cli.commands.doctor_checks import (
        api_key_source,
        config_file,
        config_keys,
        failure,
        key_accepted,
        keypair,
        service,
        solana_cli_config,
    )
    from yieldcli.cli.commands.doctor_rpc import rpc

    session = session_of(ctx)
    session.checks_config = True  # a key no setting reads is a failed check here, not a warning
    out = session.output(output, json_)
    checks = [config_file(session)]
    if checks[0].status != "fail":
        checks.append(config_keys(session))
        checks.append(api_key_source(session))
        checks.append(service(session))
        if checks[-2].status != "fail":
            checks.append(key_accepted(session))
        checks.extend(rpc(session, url))
        checks.append(keypair(session, keypair_path))
        checks.append(solana_cli_config(session))
    report(out, checks)
    failed = [c for c in checks if c.status == "fail"]
    if failed:
        first = failed[0]
        raise failure(
            first, f"{len(failed)} check{'s' * (len(failed) > 1)} failed (first: {first.name}: {first.detail})"
        )


COLOURS = {"ok": "green", "warn": "yellow", "fail": "red"}


def _lines(out: Output, checks: list[Check]) -> list[str]:
    """`status  name  detail`, the detail and hint wrapped under themselves on a terminal."""
    from yieldcli.cli.render import pager

    width = max(len(c.name) for c in checks)
    indent = " " * (width + 8)
    room = max((pager.screen_size(out.env)[0] if out.env.stdout_isatty else 4096) - len(indent), 20)
    lines: list[str] = []
    for c in checks:
        status = out.paint(c.status.ljust(4), COLOURS[c.status], stderr=False)
        for text, first in (
            (c.detail, f"{status}  {c.name.ljust(width)}  "),
            (f"hint: {c.hint}" if c.hint else "", indent),
        ):
            wrapped = textwrap.wrap(printable(text), room, break_long_words=False, break_on_hyphens=False)
            prefixes = [first] + [indent] * len(wrapped)  # one more than the lines: a hint may wrap to none
            lines.extend(prefix + part for prefix, part in zip(prefixes, wrapped, strict=False))
    return lines


def report(out: Output, checks: list[Check]) -> None:
    rows = [c.to_dict() for c in checks]
    out.records(
        rows,
        fields=("name", "status", "detail", "hint"),
        table=lambda: out.lines(_lines(out, checks)),
        whole={"ok": not any(c.status == "fail" for c in checks), "checks": rows},
    )
