"""Accounts as they stood at a recent slot: what a node's bank at a commitment level holds.

LiteSVM keeps one state, the newest. Each change to it (a landed transaction, an account set by the
sandbox) is recorded here with the accounts as they were before it and the slot it happened in, so a
read at an older slot (`finalized`, 32 blocks behind) rolls the newest state back over the changes made
after that slot. Changes at or before the finalized slot are let go: no read goes further back.
"""

from __future__ import annotations

from collections import deque

from solders.account import Account


class AccountPast:
    """The accounts' earlier values, by the slot of the change that replaced them."""

    def __init__(self) -> None:
        self._changes: deque[tuple[int, dict[str, Account | None]]] = deque()

    def record(self, slot: int, before: dict[str, Account | None], finalized: int) -> None:
        """A change in `slot`; `before` maps each address it may write to its value before (None: absent)."""
        self._changes.append((slot, dict(before)))
        while self._changes and self._changes[0][0] <= finalized:
            self._changes.popleft()

    def forget(self) -> None:
        """Another process replaced the state: its changes' earlier values are unknown here."""
        self._changes.clear()

    def as_of(self, slot: int) -> dict[str, Account | None]:
        """Every address changed after `slot`, with its value at `slot` (the oldest change's `before`)."""
        found: dict[str, Account | None] = {}
        for changed, before in self._changes:
            if changed > slot:
                for address, value in before.items():
                    found.setdefault(address, value)
        return found

    def one_as_of(self, address: str, slot: int) -> tuple[bool, Account | None]:
        """(changed after `slot`, its value at `slot` if so)."""
        for changed, before in self._changes:
            if changed > slot and address in before:
                return True, before[address]
        return False, None
