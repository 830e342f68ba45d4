"""The library does not reach into the command line: checked on the source with `ast`."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "yieldcli"
LIBRARY = [PACKAGE / "__init__.py", PACKAGE / "client.py", *sorted((PACKAGE / "api").glob("*.py")),
           *sorted((PACKAGE / "chain").glob("**/*.py"))]
# The command line's own service client: the library's, with cli_errors' hints on its errors.
CLI_ADAPTER = PACKAGE / "api" / "client.py"
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
        if path == CLI_ADAPTER:
            continue
        bad = {m for m in imported_modules(path) if m.startswith(FORBIDDEN)}
        assert not bad, f"{path.relative_to(PACKAGE.parent)} imports {sorted(bad)}"



def test_the_transaction_pipeline_is_in_the_library():
    # The flow once lived in the command layer; a command may adapt it, never hold it.
    pipeline = {path.name for path in (PACKAGE / "chain").glob("transact*.py")}
    assert {"transact.py", "transact_checks.py", "transact_send.py", "transact_outcomes.py"} <= pipeline
    assert not (PACKAGE / "commands" / "sending.py").exists() and not (PACKAGE / "commands" / "txcheck.py").exists()
    assert "yieldcli.chain.transact" in imported_modules(PACKAGE / "commands" / "txflow.py")


def test_the_pipelines_messages_name_no_flag_and_no_command():
    # A library user has no `--send` to add and no `yield tx status` to run: cli_errors adds those hints.
    import re

    for path in sorted((PACKAGE / "chain").glob("transact*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        texts = [node.value for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]
        bad = [text for text in texts if re.search(r"(^|\s)--[a-z]|`yield ", text)]
        assert not bad, f"{path.name}: {bad}"
