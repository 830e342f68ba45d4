"""`yield nonce` takes the library's path: it imports nothing of the transaction pipeline
(`yieldcli.chain.transact`), not even for a type; `Client.create_nonce_account` sends, and
`tests/cli/test_nonce.py` runs the command against the sandbox."""

from __future__ import annotations

from tests.library.test_layers import PACKAGE, runtime_imports, under


def test_the_nonce_commands_import_nothing_of_the_pipeline():
    imported = runtime_imports(PACKAGE / "cli" / "commands" / "nonce_cmd.py", types_too=True)
    assert not {name for name in imported if under(name, ("yieldcli.chain.transact",))}
    assert "yieldcli" in imported  # the Client, from the package's front door
