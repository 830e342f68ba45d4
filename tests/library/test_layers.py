"""The library does not reach into the command line: checked on the source with `ast`."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "yieldcli"
LIBRARY = [PACKAGE / "__init__.py", PACKAGE / "client.py", *sorted((PACKAGE / "api").glob("*.py"))]
FORBIDDEN = ("yieldcli.commands", "yieldcli.render", "yieldcli.session", "yieldcli.app", "yieldcli.cli_errors",
             "typer", "rich", "click")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_library_imports_nothing_from_the_command_line():
    for path in LIBRARY:
        bad = {m for m in imported_modules(path) if m.startswith(FORBIDDEN)}
        assert not bad, f"{path.relative_to(PACKAGE.parent)} imports {sorted(bad)}"

