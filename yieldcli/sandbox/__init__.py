"""A local stand-in for the yield-strategy service (and a Solana runtime) for the demo default and tests.

Importing this package costs nothing: names are loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "SandboxServer": "yieldcli.sandbox.server",
    "Service": "yieldcli.sandbox.service",
    "Response": "yieldcli.sandbox.service",
    "Fault": "yieldcli.sandbox.service",
    "Ledger": "yieldcli.sandbox.ledger",
    "LedgerError": "yieldcli.sandbox.ledger",
    "DEMO_STRATEGY_ID": "yieldcli.sandbox.demo",
    "DEMO_WALLET": "yieldcli.sandbox.demo",
    "WHALE_WALLET": "yieldcli.sandbox.demo",
    "seeded_wallet_addresses": "yieldcli.sandbox.demo",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    return getattr(importlib.import_module(module), name)
