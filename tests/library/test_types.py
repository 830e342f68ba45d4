"""The package ships py.typed: mypy has nothing to say about it (strict on the library's packages)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_mypy_strict_passes_on_the_library():
    # The files and the strictness are in pyproject.toml's [tool.mypy].
    result = mypy()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout


def test_mypy_passes_on_the_whole_package():
    # Without the strict settings (an empty configuration), on every module of yieldcli/.
    result = mypy("--config-file", "/dev/null", "--python-version", "3.11", "--follow-imports", "silent", "yieldcli")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout
