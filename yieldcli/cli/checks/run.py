"""Every check of a setup, in order, drawn as `status  name  detail` (or as records in the machine
formats), and the first failure as the error that ends the command with its exit code (3 config,
4 auth, 5 service, 6 network)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from yieldcli.cli.checks import setup
from yieldcli.cli.checks.chain import rpc
from yieldcli.cli.checks.check import Check, failure
from yieldcli.cli.render.text import printable

if TYPE_CHECKING:
    from yieldcli.cli.render.output import Output
    from yieldcli.cli.session import Session

COLOURS = {"ok": "green", "warn": "yellow", "fail": "red"}


def check_setup(
    session: Session, url: str | None, keypair_path: str | None, output: str | None = None, json_: bool = False
) -> None:
    """Run the checks, draw them in the output asked for, and raise the first failure's error when one failed."""
    session.checks_config = True  # a key no setting reads is a failed check here, not a warning
    out = session.output(output, json_)
    checks = [setup.config_file(session)]
    if checks[0].status != "fail":
        checks.append(setup.config_keys(session))
        checks.append(setup.api_key_source(session))
        checks.append(setup.service(session))
        if checks[-2].status != "fail":
            checks.append(setup.key_accepted(session))
        checks.extend(rpc(session, url))
        checks.append(setup.keypair(session, keypair_path))
        checks.append(setup.solana_cli_config(session))
    report(out, checks)
    failed = [c for c in checks if c.status == "fail"]
    if failed:
        first = failed[0]
        raise failure(
            first, f"{len(failed)} check{'s' * (len(failed) > 1)} failed (first: {first.name}: {first.detail})"
        )


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
