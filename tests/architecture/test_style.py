"""The whole repository keeps to its style: `ruff check` and `ruff format --check`, with the settings of
[tool.ruff] in pyproject.toml, find nothing. A finding fails with ruff's own report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("command", [["check", "--output-format", "full"], ["format", "--check", "--diff"]])
def test_ruff_finds_nothing(command):
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, f"ruff {' '.join(command)}:\n{done.stdout}{done.stderr}"
