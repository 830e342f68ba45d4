"""The kinds of action the guard can check, one module each (`deposit`, `withdraw`, `close`,
`transaction`): an action's row (`yieldcli/client/actions.py`) names the kind it is checked as.
A kind the guard does not know is an error, never a fall-through to another.
"""

from __future__ import annotations

from yieldcli.chain.guard.intent import Intent
from yieldcli.chain.guard.kinds import close, deposit, transaction, withdraw
from yieldcli.chain.guard.kinds.kind import CallCheck, Kind
from yieldcli.errors import UsageError

__all__ = ["KINDS", "CallCheck", "Kind", "effect_table", "kind_named", "kind_of"]

KINDS: dict[str, Kind] = {k.name: k for k in (deposit.KIND, withdraw.KIND, close.KIND, transaction.KIND)}


def kind_named(name: str) -> Kind:
    """The kind called `name`; an unknown one is refused by name."""
    found = KINDS.get(name)
    if found is None:
        raise UsageError(f"unknown action {name!r}: the guard checks {', '.join(KINDS)}", kind="usage.action.unknown")
    return found


def kind_of(intent: Intent) -> Kind:
    """How the guard checks what `intent` asks."""
    return kind_named(intent.action)


def effect_table() -> str:
    """The manual's table of expected effects (docs/manual/checks.md), one row per change a kind may make."""
    rows = ["| action | what | its exact change |", "|---|---|---|"]
    for kind in KINDS.values():
        rows += [f"| {kind.label} | {what} | {change} |" for what, change in kind.effect]
    return "\n".join(rows)
