"""The committed strategy.so is what its source builds to, with Debian clang and ../shared/sbpf."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PROGRAM_DIR = REPO / "yieldcli" / "sandbox" / "program"
SBPF = REPO.parent / "shared" / "sbpf"


def _build_module():
    spec = importlib.util.spec_from_file_location("strategy_build", PROGRAM_DIR / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _missing() -> str | None:
    if shutil.which("clang") is None:
        return "clang is not installed (the README's test command installs it with apt)"
    if not (SBPF / "sbf_link.py").exists():
        return f"{SBPF} (the Solana C SDK headers and sbf_link.py) is not beside the repository"
    return None


@pytest.mark.skipif(_missing() is not None, reason=_missing() or "")
def test_rebuilding_the_program_gives_the_committed_bytes(tmp_path):
    out = tmp_path / "strategy.so"
    _build_module().build(out, SBPF)
    assert out.read_bytes() == (PROGRAM_DIR / "strategy.so").read_bytes()


def test_the_built_program_is_package_data():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"sandbox/program/strategy.so"' in pyproject
    assert (PROGRAM_DIR / "strategy.so").read_bytes()[:4] == b"\x7fELF"
