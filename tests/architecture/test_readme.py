"""The manual's examples (README.md and every page of docs/manual/) run as written, or are matched.

Every page's ```python blocks run in order as one program, against the sandbox they start: a Python
example added to any page runs here with no change to this file. Every `yield` command in a ```sh or
```console block names commands and options that exist (the examples need wallets, keys and the
real service, so they are read against the command tree rather than run). Blocks under a
`<!-- name -->` marker are compared with what they describe by the test named beside each in MARKED.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from yieldcli.chain.guard.kinds import effect_table

ROOT = Path(__file__).resolve().parents[2]
MANUAL = ROOT / "docs" / "manual"
SDK = MANUAL / "sdk.md"
# Every page of the manual: the README and the site's pages (docs/manual/architecture.md is a link
# to docs/architecture.md, read through it).
PAGES = [ROOT / "README.md", *sorted(MANUAL.glob("*.md"))]
# Each marked block and the page it is on; what compares it is named beside it.
MARKED = {
    "main-command": "README.md",  # test_docs_site.py: docs/manual/index.md gives the same command
    "test-command": "README.md",  # .ci/run runs it; test_docs_site.py: index.md gives the same
    "bench-command": "performance.md",  # the command that runs bench/run.py
    "positions-80": "reads.md",  # tests/cli/render/test_output_screen.py: a real terminal's screen
    "effect-table": "checks.md",  # test_the_table_of_expected_effects_is_the_guards_own below
}


def python_examples(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.S | re.M)


def run_examples(page: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    program = "\n".join(python_examples(page))
    # The deposit's journal goes where `yield` keeps it: here, under the test's own data folder.
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    return subprocess.run(
        [sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env
    )


def check_sdk_page(result: subprocess.CompletedProcess[str], tmp_path: Path) -> None:
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Sandbox Yield Strategy")
    assert re.fullmatch(r"\d+ positions in \d+ pages", lines[1])
    usdc = re.fullmatch(r"USDC in positions: (\d+\.\d+)", lines[2])
    assert usdc and Decimal(usdc.group(1)) > 0
    assert any(line.startswith("USDC ") for line in lines[3:])
    assert "deposit 1.5 USDC from 5PJ1…Vr9k to strategy" in result.stdout  # the effect, checked
    assert re.fullmatch(r"confirmed \w{80,90} in slot \d+", lines[-1])
    # SandboxServer("sandbox") keeps every file it writes in that folder, none beside it.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "home", "sandbox"]  # home: the test's HOME
    assert {"state.json", "chain.json"} <= {p.name for p in (tmp_path / "sandbox").iterdir()}
    from yieldcli.chain.transact.journal import Journal

    journal = tmp_path / "data" / "yield" / "in-flight.json"
    assert journal.exists() and Journal(journal).entries() == []  # journaled, then settled


# What a page's program must print beyond running cleanly.
CHECKS = {SDK: check_sdk_page}


def test_the_sdk_page_has_a_read_and_an_iter_positions_loop():
    examples = python_examples(SDK)
    assert len(examples) >= 2
    assert "client.strategy()" in examples[0] and "for position in client.iter_positions(" in examples[1]


@pytest.mark.parametrize("page", [p for p in PAGES if python_examples(p)], ids=lambda p: str(p.relative_to(ROOT)))
def test_the_python_examples_of_a_page_run_in_order_in_one_program(page, tmp_path):
    result = run_examples(page, tmp_path)
    assert result.returncode == 0, result.stderr
    CHECKS.get(page, lambda result, tmp_path: None)(result, tmp_path)


def test_every_marked_block_is_on_the_page_its_reader_reads():
    found = sorted(
        (name, page.name)
        for page in PAGES
        for name in re.findall(r"^<!-- ([\w-]+) -->$", page.read_text(encoding="utf-8"), flags=re.M)
    )
    assert found == sorted(MARKED.items())


def test_the_table_of_expected_effects_is_the_guards_own():
    """The table under <!-- effect-table --> in docs/manual/checks.md is `kinds.effect_table()`, row for row."""
    page = (MANUAL / "checks.md").read_text(encoding="utf-8")
    after = page.split("<!-- effect-table -->\n", 1)[1]
    table = "\n".join(line for line in after.lstrip("\n").splitlines()[: len(effect_table().splitlines())])
    assert table == effect_table()


def shell_commands(page: Path) -> list[str]:
    """The command lines of a page's sh and console blocks (a console block's after its `$ `)."""
    lines = []
    for language, body in re.findall(r"^```(sh|console)\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M):
        for line in body.replace("\\\n", " ").splitlines():
            if language == "sh":
                lines.append(line)
            elif line.startswith("$ "):
                lines.append(line[2:])
    return lines


def yield_invocations(line: str) -> list[list[str]]:
    """The words after each `yield` (or `.venv/bin/yield`) that starts a command of the line."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True  # comments dropped, quotes honoured, `|`, `&&`, `>` as their own words
    words = list(lexer)
    operator = re.compile(r"[|&;<>()]+")
    found = []
    for i, word in enumerate(words):
        if re.search(r"(^|/)yield$", word) and (i == 0 or operator.fullmatch(words[i - 1])):
            rest = words[i + 1 :]
            end = next((j for j, w in enumerate(rest) if operator.fullmatch(w)), len(rest))
            found.append(rest[:end])
    return found


def problem_with(words: list[str]) -> str | None:
    """What in `yield WORDS` the command tree does not have: a command, an option, a flag run together."""
    import typer

    from yieldcli.cli.app import app
    from yieldcli.cli.completion import _options

    root = typer.main.get_command(app)
    command: Any = root
    shared = _options(root) | {"--help": False, "-h": False}  # global options are accepted anywhere
    positional: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        takes = shared | _options(command)
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            if name in takes:
                i += 2 if takes[name] and "=" not in word else 1
            elif name[:2] in takes and takes[name[:2]] and not name.startswith("--"):
                i += 1  # -ojson
            elif not name.startswith("--") and all(takes.get(f"-{c}") is False for c in name[1:]):
                i += 1  # flags run together, -vq
            else:
                return f"{word} is no option of `{command.name}`"
            continue
        group = hasattr(command, "get_command")
        sub = command.get_command(None, word) if group and not positional else None
        if sub is not None:
            command = sub
        elif group and not command.invoke_without_command:
            return f"{word!r} is no command of `{command.name}`"
        else:
            positional.append(word)
        i += 1
    if (
        hasattr(command, "get_command")
        and not command.invoke_without_command
        and not {"--help", "--version"} & set(words)
    ):
        return f"`{command.name}` needs one of its commands"
    return None


def test_every_yield_command_in_the_manual_names_commands_and_options_that_exist():
    invocations = [
        (page.name, words) for page in PAGES for line in shell_commands(page) for words in yield_invocations(line)
    ]
    assert len(invocations) > 80  # every page's, the README's included
    assert not [(page, " ".join(words), problem) for page, words in invocations if (problem := problem_with(words))]


def test_a_mistyped_command_option_or_flag_is_found():
    assert problem_with(["withdraw", "--asset", "SOL", "--amountt", "0.5"]) == "--amountt is no option of `withdraw`"
    assert problem_with(["close-acount", "--asset", "USDC"]) == "'close-acount' is no command of `yield`"
    assert problem_with(["deposit", "-vz"]) == "-vz is no option of `deposit`"
    assert problem_with(["tx"]) == "`tx` needs one of its commands"
    assert problem_with(["-vq", "tx", "sign", "-ojson", "signed.json", "--expect", "deposit:USDC:10"]) is None


def test_every_editable_install_in_the_manual_is_the_one_type_checkers_follow():
    # setuptools' default editable install loads the package through an import hook mypy and pyright
    # do not see: an install line without compat mode would replace the type-checkable one.
    found = []
    for page in PAGES:
        for line in page.read_text(encoding="utf-8").splitlines():
            if re.search(r"pip install[^&|;]* -e ", line):
                found.append(line)
                assert "editable_mode=compat" in line, f"{page.name}: {line.strip()}"
    assert len(found) >= 3  # the README's two commands and the manual site's
