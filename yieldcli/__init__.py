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
    from yieldcli.client import AsyncClient, Client
    from yieldcli.errors import (AuthError, ConfigError, NetworkError, ServiceError, UsageError,
                                 YieldError)

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
