"""`yield tx status` asks the library (`Client.transaction_status`): the command's function imports
nothing of the transaction pipeline (`yieldcli.chain.transact`); the journal, the lifetimes and the RPC
are read in the library. Its output and exit codes are run in tests/cli (test_tx_deadline.py,
test_journal.py, test_bad_input.py, test_busy_network.py)."""

from __future__ import annotations

import ast

from tests.architecture.test_layers import PACKAGE, under

TX = PACKAGE / "cli" / "commands" / "tx.py"


def imports_in(node: ast.AST) -> set[str]:
    names: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Import):
            names.update(alias.name for alias in inner.names)
        elif isinstance(inner, ast.ImportFrom) and inner.module:
            names.add(inner.module)
            names.update(f"{inner.module}.{alias.name}" for alias in inner.names)
    return names


def test_tx_status_imports_nothing_of_the_pipeline():
    functions = {node.name: node for node in ast.parse(TX.read_text()).body if isinstance(node, ast.FunctionDef)}
    assert "_status" not in functions  # what it read itself is the library's now
    imported = imports_in(functions["status"])
    assert "yieldcli.Client" in imported
    assert not {name for name in imported if under(name, ("yieldcli.chain.transact",))}
