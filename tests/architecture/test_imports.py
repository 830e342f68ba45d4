"""`import yieldcli` is free: the public names load on first use, and none of them pulls in the CLI's stack."""

from __future__ import annotations

import subprocess
import sys

import pytest

import yieldcli

HEAVY = ("solders", "solana", "rich", "keyring", "httpx2", "httpx", "asyncio", "typer", "decimal")


def imported_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return result.stdout.split()


def test_import_yieldcli_imports_nothing_heavy():
    assert imported_after("import yieldcli") == []
    # Not even typing: `import yieldcli` costs about what `python -c pass` does (bench/run.py).
    probe = "import sys, yieldcli; print('typing' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip() == "False"


def test_the_sync_client_imports_nothing_heavy():
    assert imported_after("from yieldcli import Client, Position, Page, ServiceError") == []


@pytest.mark.parametrize("name", [n for n in yieldcli.__all__ if n != "__version__"])
def test_every_exported_name_resolves(name):
    value = getattr(yieldcli, name)
    assert value.__name__ == name and name in dir(yieldcli)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        yieldcli.Nope  # noqa: B018


def test_without_proxy_variables_the_proxy_lookup_imports_nothing():
    import os

    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    probe = (
        "import sys\nfrom yieldcli.api.proxy import proxy_for\nassert proxy_for('https', 'h', None) is None\n"
        "print('urllib.request' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.strip() == "False"
