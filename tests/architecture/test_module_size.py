"""One job per module: no module of the package is over 400 lines (split it by concern when it grows)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "yieldcli"
MAX_LINES = 400


def test_no_module_is_over_400_lines():
    sizes = {
        path.relative_to(PACKAGE.parent).as_posix(): len(path.read_text().splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    assert len(sizes) > 100  # the package was found
    over = {name: lines for name, lines in sorted(sizes.items()) if lines > MAX_LINES}
    assert not over, f"over {MAX_LINES} lines: {over}"
