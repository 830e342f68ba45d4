"""The README's "Use from Python" examples run as written, against the sandbox they start."""

from __future__ import annotations

import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

from yieldcli.chain.guard.actions import effect_table

README = Path(__file__).resolve().parents[2] / "README.md"


def python_examples() -> list[str]:
    text = README.read_text()
    section = text.split("## Use from Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_section_has_a_read_and_an_iter_positions_loop():
    examples = python_examples()
    assert len(examples) >= 2
    assert "client.strategy()" in examples[0] and "for position in client.iter_positions(" in examples[1]


def test_the_examples_run_in_order_in_one_program(tmp_path):
    import os

    program = "\n".join(python_examples())
    # The deposit's journal goes where `yield` keeps it: here, under the test's own data folder.
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    result = subprocess.run(
        [sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
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


def test_the_table_of_expected_effects_is_the_guards_own():
    """The README's table under <!-- effect-table --> is `actions.effect_table()`, row for row."""
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    after = readme.split("<!-- effect-table -->\n", 1)[1]
    table = "\n".join(line for line in after.lstrip("\n").splitlines()[: len(effect_table().splitlines())])
    assert table == effect_table()
