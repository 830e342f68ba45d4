"""Every command line a hint or a message names (`yield ...` in backticks, in cli_errors.py's table and in
any message of the package) goes through the command line's own parser: no hint may send a user to a
command or a flag that does not exist (`yield strategy info --strategy ID` did). Every --flag a hint of
the table names is one some command takes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import typer
from typer import _click as click

from yieldcli.cli.app import app
from yieldcli.cli.argv import hoist_global_options
from yieldcli.cli.cli_errors import HINTS
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET

PACKAGE = Path(__file__).resolve().parents[2] / "yieldcli"
SIGNATURE = "5" * 87

# What a placeholder stands for, so the line can be parsed as a user would type it.
PLACEHOLDERS = [
    ("{setting.location} {path}", "--config /tmp/config.toml"),
    ("...", "balances"),
    ("KEY VALUE", "timeout 5"),
    ("rpc_url/keypair", "rpc_url"),
    ("add|list|remove", "list"),
    ("< id.json", ""),
    ("{signature}", SIGNATURE),
    ("{outcome.signature}", SIGNATURE),
    ("{sig}", SIGNATURE),
    ("{key}", "timeout"),
    ("{name}", "timeout"),
    ("VALUE", "5"),
    ("NAME", "staging"),
    ("ID", DEMO_STRATEGY_ID),
    ("PATH", "id.json"),
    ("URL", "http://127.0.0.1:8080"),
    ("DESTINATION", DEMO_WALLET),
    ("WALLET", DEMO_WALLET),
]


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"  # type: ignore[attr-defined]
            for v in node.values
        )
    return None


def named_command_lines() -> list[tuple[str, str]]:
    """(where, the command line) for each `yield ...` in a string of the package that is not a docstring."""
    found: set[tuple[str, str]] = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            text = None if id(node) in skip else _text(node)
            for line in re.findall(r"`(yield(?: [^`]*)?)`", text or ""):
                found.add((str(path.relative_to(PACKAGE.parent)), line))
    return sorted(found)


def parse(line: str) -> None:
    """The line through the parser the command line runs, down to its command; raises what a user would see."""
    for placeholder, value in PLACEHOLDERS:
        line = line.replace(placeholder, value)
    root = typer.main.get_command(app)
    args = hoist_global_options(root, line.split()[1:])
    ctx = root.make_context("yield", args)
    command: click.Command = root
    while hasattr(command, "resolve_command"):
        rest = [*ctx._protected_args, *ctx.args]
        if not rest:
            return
        name, command, rest = command.resolve_command(ctx, rest)  # type: ignore[attr-defined]
        assert name is not None and command is not None, line
        try:
            ctx = command.make_context(name, rest, parent=ctx)
        except click.exceptions.MissingParameter:
            return  # a hint may name a command without every argument it needs: it names one that exists


LINES = named_command_lines()


def test_the_hints_name_command_lines():
    assert len(LINES) > 30 and ("yieldcli/cli/cli_errors.py", "yield tx status {signature}") in LINES


@pytest.mark.parametrize(("where", "line"), LINES, ids=[line for _, line in LINES])
def test_each_named_command_line_parses(where, line):
    try:
        parse(line)
    except typer.Exit as done:  # --help, --version: answered, so they exist
        assert done.exit_code == 0
    except click.exceptions.UsageError as exc:
        pytest.fail(f"{where}: `{line}` does not parse: {exc.format_message()}")


def _every_flag() -> set[str]:
    root = typer.main.get_command(app)
    flags: set[str] = set()

    def walk(command: click.Command) -> None:
        for param in command.params:
            flags.update(getattr(param, "opts", ()))
            flags.update(getattr(param, "secondary_opts", ()))
        for name in getattr(command, "list_commands", lambda ctx: [])(None):
            walk(command.get_command(None, name))  # type: ignore[attr-defined]

    walk(root)
    return flags


def test_every_flag_a_hint_names_exists():
    flags = _every_flag()
    named = {(kind, flag) for kind, hint in HINTS.items() for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", hint)}
    assert named, "the table names flags"
    missing = sorted((kind, flag) for kind, flag in named if flag not in flags)
    assert not missing, missing
