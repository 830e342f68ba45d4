"""The package ships py.typed: mypy --strict has nothing to say about any module of it, nor about a
user's strict project that imports what the package exports."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import yieldcli

ROOT = Path(__file__).resolve().parents[2]


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_mypy_strict_passes_on_every_module_of_the_package():
    result = mypy("--strict", "yieldcli")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout
    checked = int(result.stdout.rsplit(" in ", 1)[1].split()[0])
    assert checked == sum(1 for _ in (ROOT / "yieldcli").rglob("*.py")), result.stdout


def test_pyproject_asks_mypy_for_the_same():
    # What `mypy` with no arguments runs (an editor, a hook): the whole package, strict, nothing loosened.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["files"] == ["yieldcli"] and config["strict"] is True
    assert not {"overrides", "exclude", "follow_imports", "ignore_errors"} & set(config), config


def test_a_strict_user_can_import_every_export(tmp_path):
    script = tmp_path / "user.py"
    names = [name for name in yieldcli.__all__ if name != "__version__"]
    script.write_text(f"from yieldcli import __version__, {', '.join(names)}\n\nprint(__version__, {names[0]})\n")
    result = mypy("--strict", "--config-file", "/dev/null", str(script))
    assert result.returncode == 0, result.stdout + result.stderr
