"""What a simulated transaction did to the user, and where value went: the facts the intent guard compares.

`Observed` sorts the accounts: the user's own (wallet, payer, the wallet's token accounts), the
others the user's keys control (read from the chain by `value_flow.authority_kind`), and the
transfers the pinned strategy program made (from the simulation's inner instructions). The rules
here say where value may go; `intent.compare` adds the amount and authority rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from yieldcli.chain.instruction_rules import Context, Resolved
from yieldcli.chain.intent_text import amount_text, short
from yieldcli.chain.state import State, TokenState, rent_exempt_minimum
from yieldcli.chain.value_flow import (
    Inner,
    Move,
    authority_kind,
    position_user,
    strategy_moves,
    wallet_token_accounts_opened,
    wsol_accounts_opened,
)
from yieldcli.solana import programs

if TYPE_CHECKING:
    from yieldcli.chain.intent import Intent

MAX_WITHDRAW_FEE_BPS = 100  # a withdrawal fee taken from the position on the way out: at most 1 %


@dataclass
class Observed:
    intent: Intent
    before: Mapping[str, State | None]
    after: Mapping[str, State | None]
    decimals: Mapping[str, int]
    fee: int
    resolved: Resolved | None
    inner: Inner
    user: set[str] = field(default_factory=set)  # the wallet, the payer, the wallet's token accounts
    controlled: dict[str, str] = field(default_factory=dict)  # every other account the user's keys control: kind
    moves: list[Move] = field(default_factory=list)
    trusted_received: dict[str, int] = field(default_factory=dict)  # plain transfers accepted by the user's trust

    def __post_init__(self) -> None:
        wallet, pinned = self.intent.wallet, self.intent.strategy_program
        opened = wallet_token_accounts_opened(self.resolved, wallet) if self.resolved else set()
        self.user = (
            {wallet, self.intent.payer}
            | opened
            | {
                a
                for a in self.before
                if any(
                    s is not None and s.token is not None and s.token.owner == wallet
                    for s in (self.before[a], self.after.get(a))
                )
            }
        )
        for address in self.before:
            if address in self.user:
                continue
            kind = authority_kind(self.before.get(address), wallet, pinned) or authority_kind(
                self.after.get(address), wallet, pinned
            )
            if kind is not None:
                self.controlled[address] = kind
        self.moves = strategy_moves(self.resolved, self.inner, pinned) if self.resolved else []

    def lamports(self, address: str, side: Mapping[str, State | None]) -> int:
        state = side.get(address)
        return state.lamports if state else 0

    def gain(self, address: str) -> int:
        return self.lamports(address, self.after) - self.lamports(address, self.before)

    def user_sol(self) -> int:
        return sum(self.gain(a) for a in self.user)

    def held(self, address: str, side: Mapping[str, State | None]) -> TokenState | None:
        """The token state, counted as the user's only while the wallet owns it."""
        state = side.get(address)
        token = state.token if state else None
        return token if token is not None and token.owner == self.intent.wallet else None

    def tokens(self) -> dict[str, int]:
        change: dict[str, int] = {}
        for a in self.user:
            for sign, side in ((-1, self.before), (1, self.after)):
                token = self.held(a, side)
                if token is not None:
                    change[token.mint] = change.get(token.mint, 0) + sign * token.amount
        return {m: d for m, d in change.items() if d}

    def held_before(self, mint: str) -> int:
        return sum(t.amount for a in self.user if (t := self.held(a, self.before)) is not None and t.mint == mint)

    def opened_rent(self, address: str) -> int:
        """Rent put into an account this transaction opens (wrapped SOL in it is not rent)."""
        state = self.after.get(address)
        if self.before.get(address) is not None or state is None:
            return 0
        native = state.token.amount if state.token is not None and state.token.native else 0
        return max(min(state.lamports - native, rent_exempt_minimum(state.size)), 0)

    def own_rent(self, address: str) -> int:
        """Rent of a new account that is the user's own: the wallet's token accounts, the position the
        pinned program opens (it then holds it for the user), the token account of the recipient the user named."""
        state = self.after.get(address)
        if state is None:
            return 0
        mine = (
            address in self.user
            or (state.owner == self.intent.strategy_program and self.controlled.get(address) == "position")
            or (state.token is not None and state.token.owner == self.intent.funds_recipient is not None)
        )
        return self.opened_rent(address) if mine else 0

    def mint_of(self, address: str) -> str | None:
        """The mint of a token account, from the chain (before, else after)."""
        for side in (self.before, self.after):
            state = side.get(address)
            if state is not None and state.token is not None:
                return state.token.mint
        return self.intent.mint

    def moved_to(self, address: str, *, lamports: bool) -> int:
        return sum(m.amount for m in self.moves if m.destination == address and m.lamports == lamports)

    def token_gain(self, address: str) -> int:
        amounts = [
            s.token.amount if s is not None and s.token is not None else 0
            for s in (self.before.get(address), self.after.get(address))
        ]
        return amounts[1] - amounts[0]

    def context(self) -> Context:
        wsol = {
            a for a in self.user for s in (self.before.get(a), self.after.get(a)) if s and s.token and s.token.native
        }
        if self.resolved is not None:
            wsol |= wsol_accounts_opened(self.resolved, self.intent.wallet)
        return Context(
            self.intent.action,
            self.intent.wallet,
            self.intent.payer,
            self.intent.strategy_program,
            frozenset(self.user),
            frozenset(self.user | set(self.controlled)),
            frozenset(wsol),
            self.intent.funds_recipient,
            self.intent.mint if self.intent.strategy else None,  # trust is per strategy: none named, none applies
            self.intent.trusted,
            self.trust_cap(),
        )

    def trust_cap(self) -> int:
        """What plain transfers to trusted destinations may move in all: the deposit (everything held with --all)."""
        mint = self.intent.mint
        if self.intent.action != "deposit" or mint is None:
            return 0
        return self.intent.amount if self.intent.amount is not None else self.held_before(mint)

    def trusted_room(self, address: str, token: TokenState, gained: int) -> bool:
        """Accept `gained` tokens at `address` by the user's trust: a destination trusted for this
        cluster, strategy and the deposit's mint (the account's mint read from the chain), and no
        more in all than the deposit."""
        pinned = dict(self.intent.trusted).get(address)
        if pinned is None or pinned != token.mint or token.mint != self.intent.mint:
            return False
        if sum(self.trusted_received.values()) + gained > self.trust_cap():
            return False
        self.trusted_received[address] = self.trusted_received.get(address, 0) + gained
        return True


def destinations(seen: Observed, tokens: dict[str, int], decimals: Mapping[str, int]) -> list[str]:
    """Value reaches an account not the user's only by a transfer the pinned program makes to it.

    Lamports a stranger's account gains are refused unless they are tokens (wrapped SOL) the
    program moved, or the rent of an account that is the user's own."""
    diffs = []
    falling = {m for m, d in tokens.items() if d < 0}
    for address in seen.after:
        if address in seen.user:
            continue
        before, after = seen.before.get(address), seen.after.get(address)
        token_after = after.token if after else None
        if token_after is not None and token_after.mint in falling:
            gained = token_after.amount - (before.token.amount if before and before.token else 0)
            plain = gained - seen.moved_to(address, lamports=False)
            if plain > 0 and not seen.trusted_room(address, token_after, plain):
                diffs.append(
                    f"{amount_text(gained, token_after.mint, decimals)} to {short(address)} "
                    f"(owned by {short(token_after.owner)}), not asked for"
                )
                continue
        gained = seen.gain(address) - seen.own_rent(address)
        if gained <= 0:
            continue
        if token_after is not None and token_after.native:
            gained -= (
                max(seen.token_gain(address), 0)
                if seen.moved_to(address, lamports=False) + seen.trusted_received.get(address, 0)
                >= seen.token_gain(address)
                else 0
            )
        # SOL the program takes from the user into the strategy; what it pays out of the strategy is
        # checked in `strategy_payouts`.
        gained -= sum(m.amount for m in seen.moves if m.lamports and m.destination == address and m.source in seen.user)
        if gained > 0:
            program = programs.PROGRAM_NAMES.get(after.owner, short(after.owner)) if after is not None else ""
            owner = (
                f" (a new account owned by {program})" if after is not None and before is None and after.owner else ""
            )
            diffs.append(f"{amount_text(gained, None, decimals)} to {short(address)}{owner}, not asked for")
    return diffs


def strategy_payouts(seen: Observed, decimals: Mapping[str, int]) -> list[str]:
    """What the strategy program pays out of its accounts to someone else than the user.

    On a withdrawal or close it goes to the user (or to the recipient the user named when closing);
    a withdrawal may pay a fee elsewhere, at most 1 % of what the user receives. On any other request
    the program may move value between accounts that are not the user's (a deposit into its vault, a
    payer's transaction for another wallet), but not out of one the user's keys control."""
    intent = seen.intent
    outward = [
        m
        for m in seen.moves
        if m.source not in seen.user and m.destination not in seen.user and m.destination != _recipient_account(seen)
    ]
    if intent.action in ("withdraw", "close-account"):
        received = sum(m.amount for m in seen.moves if m.destination in seen.user and not m.lamports)
        allowed = -(-received * MAX_WITHDRAW_FEE_BPS // 10_000) if intent.action == "withdraw" else 0
        if sum(m.amount for m in outward) <= allowed:
            return []
    else:
        outward = [m for m in outward if m.source in seen.controlled]
    return [
        f"{amount_text(m.amount, None if m.lamports else seen.mint_of(m.source), decimals)} of your position to "
        f"{short(m.destination)}, not asked for"
        for m in outward
    ]


def _recipient_account(seen: Observed) -> str | None:
    """The token account the position's remainder may go to when closing: one the named recipient owns."""
    recipient = seen.intent.funds_recipient
    if recipient is None or seen.intent.action != "close-account":
        return None
    for address, state in seen.after.items():
        if state is not None and state.token is not None and (state.token.owner == recipient or address == recipient):
            return address
    return recipient


def controlled_unchanged(seen: Observed, resolved: Resolved | None) -> list[str]:
    """Accounts the user's keys control that the request does not change: they must not change."""
    diffs = []
    nonce = lifetime_nonce(resolved)
    for address, kind in sorted(seen.controlled.items()):
        before, after = seen.before.get(address), seen.after.get(address)
        if before == after or (
            kind == "nonce"
            and address == nonce
            and after is not None
            and before is not None
            and after.lamports == before.lamports
            and after.owner == before.owner
        ):
            continue
        if kind == "position":
            if after is None:
                continue  # a closed position: its lamports are followed like any other SOL
            if position_user(after) != seen.intent.wallet:
                diffs.append(f"your position {short(address)} would belong to {short(position_user(after) or '?')}")
            continue
        if (
            kind == "delegated"
            and after is not None
            and before is not None
            and after.token
            and before.token
            and after.token.amount >= before.token.amount
            and after.token == before.token
        ):
            continue
        diffs.append(f"your {_KIND_NAMES[kind]} {short(address)} changes, not asked for")
    for address, name in {
        seen.intent.payer: "payer",
        seen.intent.wallet: "wallet",
    }.items():  # one line when the wallet pays
        before, after = seen.before.get(address), seen.after.get(address)
        if (
            before is not None
            and after is not None
            and before.owner
            and (after.owner != before.owner or after.size != before.size)
        ):
            what = (
                f"assigned to program {short(after.owner)}"
                if after.owner != before.owner
                else f"given {after.size} bytes of data"
            )
            diffs.append(f"your {name} {short(address)} would be {what}")
    return diffs


_KIND_NAMES = {
    "delegated": "token account (you are its delegate or close authority)",
    "nonce": "nonce account",
    "stake": "stake account",
    "mint": "mint",
    "position": "position",
    "token": "token account",
}


def lifetime_nonce(resolved: Resolved | None) -> str | None:
    """The nonce account a durable-nonce transaction advances in its first instruction."""
    if resolved is None or not resolved.instructions:
        return None
    program_index, accounts, data = resolved.instructions[0]
    if resolved.keys[program_index] == programs.SYSTEM_PROGRAM and data[:4] == b"\x04\x00\x00\x00" and accounts:
        return resolved.keys[accounts[0]]
    return None
