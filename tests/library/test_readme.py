"""The manual's examples (README.md and every page of docs/manual/) run as written, or are matched.

Every page's ```python blocks run in order as one program, against the sandbox they start: a Python
example added to any page runs here with no change to this file. Blocks under a `<!-- name -->`
marker are compared with what they describe by the test named beside each in MARKED.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from yieldcli.chain.guard.actions import effect_table

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
    "positions-80": "reads.md",  # tests/cli/test_screen.py: a real terminal's screen
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
    from yieldcli.chain.journal import Journal

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
    """The table under <!-- effect-table --> in docs/manual/checks.md is `actions.effect_table()`, row for row."""
    page = (MANUAL / "checks.md").read_text(encoding="utf-8")
    after = page.split("<!-- effect-table -->\n", 1)[1]
    table = "\n".join(line for line in after.lstrip("\n").splitlines()[: len(effect_table().splitlines())])
    assert table == effect_table()
