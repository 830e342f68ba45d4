"""What the guard knows of one kind of action (`Kind`): the strategy instruction it needs, the rules it may
use the user's authority for, its expected effect and its own checks of the strategy instruction. Each
kind is a module of this package with one `KIND`; an action's row names the kind it is checked as, and
no code of the guard asks an action's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from yieldcli.chain.guard.expected import Expected
from yieldcli.chain.guard.holdings import Holdings
from yieldcli.chain.guard.intent import Intent
from yieldcli.chain.guard.strategies import Call
from yieldcli.chain.guard.text import amount_text, short

# (expected, holdings, the matched strategy call, the strategy key it targets, what trusted destinations got)
Expect = Callable[[Expected, Holdings, "Call | None", "bytes | None", Mapping[str, int]], None]


@dataclass
class CallCheck:
    """One strategy instruction matched to the request; a kind's `check_call` adds what differs to `problems`."""

    intent: Intent
    call: Call
    holdings: Holdings
    wallet: str
    mint: str
    associated: Callable[[str, str], str]  # (owner, mint) -> its associated token account
    problems: list[str] = field(default_factory=list)

    def expect(self, what: str, seen: str | None, wanted: str) -> None:
        if seen != wanted:
            self.problems.append(f"names {what} {short(seen or '?')}, not {short(wanted)}")

    def text(self, amount: int) -> str:
        return amount_text(amount, self.mint, {})


def _no_call(_: CallCheck) -> None:
    return None


@dataclass(frozen=True)
class Kind:
    """How the guard checks an action; the manual's effect table is `effect`, row for row."""

    name: str  # what the guard calls it in its verdicts: deposit, withdraw, close-account, transaction
    call: str  # the one strategy-program instruction it needs ("": none)
    needed: frozenset[str]  # the System/Token/ATA rules it may use the user's authority for (instructions.py)
    effect: tuple[tuple[str, str], ...]  # (what, its exact change): everything else is unchanged
    label: str  # how the manual's effect table names it
    expect: Expect | None = None  # its expected effect, filled in with amounts (None: the fee only)
    check_call: Callable[[CallCheck], None] = _no_call  # its own checks of the matched strategy instruction
    head: Callable[[Intent, str, str], str] | None = None  # the summary's first words: (intent, what, strategy)
    asset: bool = True  # it names an asset (every action but a plain transaction)
    opens_position: bool = False  # it may open the user's position (a deposit into a new one)
    trusted_transfers: bool = False  # plain transfers to destinations the user trusts may carry it (a deposit)
    recipient: bool = False  # what it pays may go to a recipient the user named (a close)
    pays_out: bool = False  # the strategy program pays the user (a withdrawal, a close); else it may pay no one
    closes: bool = False  # it closes the position: what it held and its rent come back (a close)
