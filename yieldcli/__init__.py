"""yield: a Python library and command-line tool for a Solana yield-strategy service.

    from yieldcli import Client

Importing the package costs nothing: the names below are loaded on first use (PEP 562), so
`yield --version` and `import yieldcli` stay as fast as a bare interpreter.
"""

# The names imported for type checkers are the exports (`X as X`: re-exported, as mypy --strict wants for
# `from yieldcli import Client`); at run time __getattr__ loads them, and __all__ is built from _EXPORTS.

from __future__ import annotations

from yieldcli.version import __version__ as __version__

# Not typing.TYPE_CHECKING: importing typing would be most of what `import yieldcli` costs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from yieldcli.api.models import (
        Balance as Balance,
    )
    from yieldcli.api.models import (
        BodyError as BodyError,
    )
    from yieldcli.api.models import (
        Meta as Meta,
    )
    from yieldcli.api.models import (
        Page as Page,
    )
    from yieldcli.api.models import (
        Position as Position,
    )
    from yieldcli.api.models import (
        Strategy as Strategy,
    )
    from yieldcli.api.models import (
        YieldRecord as YieldRecord,
    )
    from yieldcli.chain.transact.lifetime import (
        ReviewExpired as ReviewExpired,
    )
    from yieldcli.chain.transact.outcomes import (
        ConfirmationRequired as ConfirmationRequired,
    )
    from yieldcli.chain.transact.outcomes import (
        Confirmed as Confirmed,
    )
    from yieldcli.chain.transact.outcomes import (
        Expired as Expired,
    )
    from yieldcli.chain.transact.outcomes import (
        Failed as Failed,
    )
    from yieldcli.chain.transact.outcomes import (
        Outcome as Outcome,
    )
    from yieldcli.chain.transact.outcomes import (
        Pending as Pending,
    )
    from yieldcli.chain.transact.outcomes import (
        Sent as Sent,
    )
    from yieldcli.chain.transact.outcomes import (
        SentThenInterrupted as SentThenInterrupted,
    )
    from yieldcli.chain.transact.outcomes import (
        Signed as Signed,
    )
    from yieldcli.chain.transact.outcomes import (
        Unsigned as Unsigned,
    )
    from yieldcli.client.clients import AsyncClient as AsyncClient
    from yieldcli.client.clients import Client as Client
    from yieldcli.client.prepared import (
        AsyncPreparedTransaction as AsyncPreparedTransaction,
    )
    from yieldcli.client.prepared import (
        PreparedTransaction as PreparedTransaction,
    )
    from yieldcli.errors import (
        AuthError as AuthError,
    )
    from yieldcli.errors import (
        ConfigError as ConfigError,
    )
    from yieldcli.errors import (
        Declined as Declined,
    )
    from yieldcli.errors import (
        NetworkError as NetworkError,
    )
    from yieldcli.errors import (
        Refused as Refused,
    )
    from yieldcli.errors import (
        ServiceError as ServiceError,
    )
    from yieldcli.errors import (
        SimulationFailed as SimulationFailed,
    )
    from yieldcli.errors import (
        TransactionExpired as TransactionExpired,
    )
    from yieldcli.errors import (
        TransactionFailed as TransactionFailed,
    )
    from yieldcli.errors import (
        TransactionPending as TransactionPending,
    )
    from yieldcli.errors import (
        UsageError as UsageError,
    )
    from yieldcli.errors import (
        YieldError as YieldError,
    )

_EXPORTS = {
    "Client": "yieldcli.client.clients",
    "AsyncClient": "yieldcli.client.clients",
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
    "PreparedTransaction": "yieldcli.client.prepared",
    "AsyncPreparedTransaction": "yieldcli.client.prepared",
    "Outcome": "yieldcli.chain.transact.outcomes",
    "Unsigned": "yieldcli.chain.transact.outcomes",
    "Signed": "yieldcli.chain.transact.outcomes",
    "Sent": "yieldcli.chain.transact.outcomes",
    "Confirmed": "yieldcli.chain.transact.outcomes",
    "Failed": "yieldcli.chain.transact.outcomes",
    "Expired": "yieldcli.chain.transact.outcomes",
    "Pending": "yieldcli.chain.transact.outcomes",
    "ConfirmationRequired": "yieldcli.chain.transact.outcomes",
    "SentThenInterrupted": "yieldcli.chain.transact.outcomes",
    "ReviewExpired": "yieldcli.chain.transact.lifetime",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
