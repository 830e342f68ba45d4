"""The shapes every strategy layout speaks: a decoded instruction (`Call`), a position, the `Layout`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class PositionView:
    """A user's position as the program accounts it."""

    user: str
    strategy_key: bytes
    mint: str
    deposited: int
    balance: int


@dataclass(frozen=True)
class Call:
    """One instruction of the strategy program, decoded. `kind` is "deposit", "withdraw", "close" or another
    instruction's name; `token_account` is the deposit's source, the withdrawal's destination or the close's
    recipient; `amount` None with `everything` means the whole position."""

    kind: str
    user: str | None = None
    payer: str | None = None
    token_account: str | None = None
    mint: str | None = None
    position: str | None = None
    vault: str | None = None
    authority: str | None = None
    amount: int | None = None
    everything: bool = False
    exclude_fees: bool = False
    strategy_key: bytes | None = None  # carried by a deposit; read from the position for the others
    malformed: str | None = None  # why the data or accounts do not make one of the program's instructions
    token_program: str | None = None  # the token program the call names (its transfers go to that one)


class Layout(Protocol):
    name: str

    def decode(self, data: bytes, accounts: list[str]) -> Call: ...

    def position(self, owner: str, data: bytes) -> PositionView | None: ...

    def strategy_key(self, strategy_id: str) -> bytes: ...

    def position_address(self, user: str, strategy_key: bytes, mint: str) -> str: ...

    def vault_address(self, mint: str) -> str: ...

    def authority_address(self) -> str: ...

    def withdrawal(self, balance: int, call: Call) -> tuple[int, int]:
        """(gross taken from the position, net paid to the user) for a withdrawal call."""
        ...

    def after(self, before: PositionView | None, call: str, gross: int) -> PositionView | None:
        """The position after the program's instruction `call` (its `Call.kind`) moved `gross` (a
        deposit's amount, a withdrawal's gross)."""
        ...
