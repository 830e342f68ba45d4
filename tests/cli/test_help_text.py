"""`--help` of every command and group, walked through `yield` itself at 80 columns: placeholders that
name the value, summaries whole, an example everywhere."""

from __future__ import annotations

import re

import pytest


def commands_of(help_text: str) -> list[str]:
    """The command names a group's help lists under "Commands:"."""
    _, _, listing = help_text.partition("\nCommands:\n")
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*)  ", listing, re.MULTILINE)]


@pytest.fixture(scope="module")
def every_help(tmp_path_factory):
    """(command path, help text) for the root and every command and group under it."""
    import os
    import subprocess

    from tests.conftest import YIELD

    home = tmp_path_factory.mktemp("home")
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "c"), "COLUMNS": "80"}
    env = {k: v for k, v in env.items() if not k.startswith("YIELD_")}
    found: list[tuple[str, str]] = []
    todo = [[]]
    while todo:
        path = todo.pop(0)
        done = subprocess.run([YIELD, *path, "--help"], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, (path, done.stderr)
        found.append((" ".join(["yield", *path]), done.stdout))
        todo += [[*path, name] for name in commands_of(done.stdout)]
    return found


def test_the_walk_reaches_every_group_and_the_commands_the_issue_named(every_help):
    names = {path for path, _ in every_help}
    assert {"yield config trust", "yield completion", "yield mcp audit", "yield tx", "yield init"} <= names
    assert len(names) > 40


def test_every_command_and_group_has_an_example(every_help):
    missing = [path for path, text in every_help if "Example" not in text]
    assert not missing


def test_placeholders_name_the_value(every_help):
    generic = [
        (path, line.strip())
        for path, text in every_help
        for line in text.splitlines()
        if re.search(r"<(str|integer|seconds|float|text)>", line)
    ]
    assert not generic
    deposit = dict(every_help)["yield deposit"]
    assert "--amount AMOUNT" in deposit and "--confirm-timeout SECONDS" in deposit
    assert "--timeout SECONDS" in dict(every_help)["yield"]


def test_help_fits_80_columns_and_summaries_are_whole(every_help):
    wide = [(path, line) for path, text in every_help for line in text.splitlines() if len(line) > 80]
    assert not wide
    cut = [
        (path, line)
        for path, text in every_help
        for line in text.split("\nCommands:\n")[-1].splitlines()
        if line.rstrip().endswith(("...", "…"))
    ]
    assert not cut
    root = dict(every_help)["yield"]
    assert "  positions      Show a wallet's positions in a strategy\n" in root
