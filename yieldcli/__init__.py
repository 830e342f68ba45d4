"""yield: a Python library and command-line tool for a Solana yield-strategy service.

    from yieldcli import Client

Importing the package costs nothing: the names below are loaded on first use (PEP 562), so
`yield --version` and `import yieldcli` stay as fast as a bare interpreter.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Not typing.TYPE_CHECKING: importing typing would be most of what `import yieldcli` costs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from yieldcli.api.models import Balance, BodyError, Meta, Page, Position, Strategy, YieldRecord
    from yieldcli.chain.transact_outcomes import (
        ConfirmationRequired,
        Confirmed,
        Expired,
        Failed,
        Outcome,
        Pending,
        Sent,
        SentThenInterrupted,
        Signed,
        Unsigned,
    )
    from yieldcli.client import AsyncClient, Client
    from yieldcli.client_prepared import AsyncPreparedTransaction, PreparedTransaction
    from yieldcli.errors import (
        AuthError,
        ConfigError,
        Declined,
        NetworkError,
        Refused,
        ServiceError,
        SimulationFailed,
        TransactionExpired,
        TransactionFailed,
        TransactionPending,
        UsageError,
        YieldError,
    )

_EXPORTS = {
    "Client": "yieldcli.client",
    "AsyncClient": "yieldcli.client",
    "Strategy": "yieldcli.api.models",
    "Position": "yieldcli.api.models",
    "Balance": "yieldcli.api.models",
    "YieldRecord": "yieldcli.api.models",
    "Page": "yieldcli.api.models",
    "Meta": "yieldcli.api.models",
    "BodyError": "yieldcli.api.models",
    "YieldError": "yieldcli.errors",
    "UsageError": "yieldcli.errors",
    "ConfigError": "yieldcli.errors",
    "AuthError": "yieldcli.errors",
    "ServiceError": "yieldcli.errors",
    "NetworkError": "yieldcli.errors",
    "Refused": "yieldcli.errors",
    "SimulationFailed": "yieldcli.errors",
    "Declined": "yieldcli.errors",
    "TransactionFailed": "yieldcli.errors",
    "TransactionExpired": "yieldcli.errors",
    "TransactionPending": "yieldcli.errors",
    # Writes: a prepared transaction, and how it ended.
    "PreparedTransaction": "yieldcli.client_prepared",
    "AsyncPreparedTransaction": "yieldcli.client_prepared",
    "Outcome": "yieldcli.chain.transact_outcomes",
    "Unsigned": "yieldcli.chain.transact_outcomes",
    "Signed": "yieldcli.chain.transact_outcomes",
    "Sent": "yieldcli.chain.transact_outcomes",
    "Confirmed": "yieldcli.chain.transact_outcomes",
    "Failed": "yieldcli.chain.transact_outcomes",
    "Expired": "yieldcli.chain.transact_outcomes",
    "Pending": "yieldcli.chain.transact_outcomes",
    "ConfirmationRequired": "yieldcli.chain.transact_outcomes",
    "SentThenInterrupted": "yieldcli.chain.transact_outcomes",
}

# Spelt out, not computed from _EXPORTS: type checkers and editors read a literal list (a test keeps the two alike).
__all__ = [
    "__version__",
    "AsyncClient",
    "AsyncPreparedTransaction",
    "AuthError",
    "Balance",
    "BodyError",
    "Client",
    "ConfigError",
    "ConfirmationRequired",
    "Confirmed",
    "Declined",
    "Expired",
    "Failed",
    "Meta",
    "NetworkError",
    "Outcome",
    "Page",
    "Pending",
    "Position",
    "PreparedTransaction",
    "Refused",
    "Sent",
    "SentThenInterrupted",
    "ServiceError",
    "Signed",
    "SimulationFailed",
    "Strategy",
    "TransactionExpired",
    "TransactionFailed",
    "TransactionPending",
    "Unsigned",
    "UsageError",
    "YieldError",
    "YieldRecord",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
