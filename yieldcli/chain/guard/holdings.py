"""Everything the user owns or has a claim on, read from account states the chain returned.

Owned: the wallet, the payer when we sign for it, every token account whose owner is the wallet, and
every position the pinned strategy program keeps for the wallet (decoded by its layout). Controlled
(must not change unless the request needs it): token accounts the wallet is delegate or close authority
of, nonce and stake accounts and mints whose authority is the wallet; and every account of the other
keys we sign with (a nonce's authority): the keys themselves, their token accounts, and what they are
the authority of. Pure.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from solders.pubkey import Pubkey

from yieldcli.chain.guard.intent import Intent
from yieldcli.chain.guard.message import Resolved
from yieldcli.chain.guard.strategies import Layout, PositionView
from yieldcli.chain.tx.state import State, TokenState
from yieldcli.solana import programs

STAKE_PROGRAM = "Stake11111111111111111111111111111111111111"
NONCE_SIZE = 80
MINT_SIZE = 82

# Inner instructions as the RPC gives them: by top-level index, (program index, account indexes, data).
Inner = Mapping[int, Sequence[tuple[int, tuple[int, ...], bytes]]]
Side = Mapping[str, State | None]


def _key(data: bytes, offset: int) -> str:
    return str(Pubkey.from_bytes(data[offset : offset + 32]))


def authority_kind(state: State | None, wallet: str) -> str | None:
    """What lets the wallet change an account it does not own: 'delegated', 'nonce', 'stake', 'mint'.
    (A token account the wallet owns but someone else may close is 'closable': see `Holdings`.)"""
    if state is None:
        return None
    if state.token is not None:
        token = state.token
        return "delegated" if token.owner != wallet and wallet in (token.delegate, token.close_authority) else None
    data = state.data
    if state.owner == programs.SYSTEM_PROGRAM and len(data) == NONCE_SIZE and _key(data, 8) == wallet:
        return "nonce"
    if state.owner == STAKE_PROGRAM and len(data) >= 76 and wallet in (_key(data, 12), _key(data, 44)):
        return "stake"
    if (
        state.owner in programs.TOKEN_PROGRAMS
        and len(data) >= MINT_SIZE
        and ((data[0] and _key(data, 4) == wallet) or (data[46] and _key(data, 50) == wallet))
    ):
        return "mint"
    return None


@dataclass
class Holdings:
    """The user's accounts among those a transaction may write, sorted by kind, on both sides."""

    intent: Intent
    before: Side
    after: Side
    layout: Layout | None
    users: set[str] = field(default_factory=set)  # the wallet, and the payer when its SOL is the user's
    tokens: set[str] = field(default_factory=set)  # token accounts the wallet owns, before or after
    positions: dict[str, tuple[PositionView | None, PositionView | None]] = field(default_factory=dict)
    holding_key: set[str] = field(default_factory=set)  # the pinned program's accounts that hold the wallet's key
    controlled: dict[str, str] = field(default_factory=dict)  # address -> kind

    def __post_init__(self) -> None:
        wallet, pinned = self.intent.wallet, self.intent.strategy_program
        self.users = {wallet} | ({self.intent.payer} if self.intent.payer_is_users else set())
        raw = bytes(Pubkey.from_string(wallet))
        for address in sorted(set(self.before) | set(self.after)):
            states = (self.before.get(address), self.after.get(address))
            if any(s is not None and s.token is not None and s.token.owner == wallet for s in states):
                if any(
                    s is not None and s.token is not None and s.token.close_authority not in (None, wallet)
                    for s in states
                ):
                    # Someone else may close it and take its lamports (and, wrapped SOL, its amount):
                    # not the user's to put value into. It must stay exactly as it is.
                    self.controlled[address] = "closable"
                    continue
                self.tokens.add(address)
                continue
            if pinned is not None and any(s is not None and s.owner == pinned for s in states):
                if self.layout is not None:
                    views = tuple(self._position(s) for s in states)
                    if any(v is not None and v.user == wallet for v in views):
                        self.positions[address] = (views[0], views[1])
                elif any(s is not None and s.owner == pinned and raw in s.data for s in states):
                    self.holding_key.add(address)
                continue
            kind = authority_kind(states[0], wallet) or authority_kind(states[1], wallet)
            if kind is not None and address not in self.users:
                self.controlled[address] = kind
                continue
            signer_kind = self._other_signers_kind(address, states)
            if signer_kind is not None and address not in self.users:
                self.controlled[address] = signer_kind

    def _other_signers_kind(self, address: str, states: tuple[State | None, State | None]) -> str | None:
        """What ties an account to another key we sign with: the key itself, a token account it owns,
        or an account it is the authority of (its nonce among them)."""
        others = self.intent.other_signers
        if address in others:
            return "signer"
        if any(s is not None and s.token is not None and s.token.owner in others for s in states):
            return "signer"
        for key in sorted(others):
            kind = authority_kind(states[0], key) or authority_kind(states[1], key)
            if kind is not None:
                return kind
        return None

    def _position(self, state: State | None) -> PositionView | None:
        if state is None or self.layout is None:
            return None
        return self.layout.position(state.owner, state.data)

    @property
    def owned(self) -> set[str]:
        """Every account whose lamports are the user's or the user's claim."""
        return self.users | self.tokens | set(self.positions) | self.holding_key

    def was_owned(self, address: str) -> bool:
        """The account was the user's before the transaction (its lamports counted as theirs then)."""
        if address in self.users:
            return True
        if address in self.tokens:
            return self.held(address, self.before) is not None
        if address in self.positions:
            view = self.positions[address][0]
            return view is not None and view.user == self.intent.wallet
        return address in self.holding_key and self.before.get(address) is not None

    def lamports(self, address: str, side: Side) -> int:
        state = side.get(address)
        return state.lamports if state else 0

    def gain(self, address: str) -> int:
        return self.lamports(address, self.after) - self.lamports(address, self.before)

    def held(self, address: str, side: Side) -> TokenState | None:
        """The token state, counted as the user's only while the wallet owns it."""
        state = side.get(address)
        token = state.token if state else None
        return token if token is not None and token.owner == self.intent.wallet else None

    def held_total(self, mint: str) -> int:
        """What the user's token accounts of `mint` held before the transaction."""
        return sum(t.amount for a in self.tokens if (t := self.held(a, self.before)) and t.mint == mint)

    def token_owner(self, address: str | None) -> str | None:
        """The owner of a token account, from the chain (after, else before); None for any other account."""
        for side in (self.after, self.before):
            state = side.get(address or "")
            if state is not None and state.token is not None:
                return state.token.owner
        return None

    def others_may_take(self, address: str | None) -> bool:
        """A token account whose delegate, or close authority, is not its owner: what is paid into it
        is partly someone else's to spend or to close (after, else before)."""
        for side in (self.after, self.before):
            state = side.get(address or "")
            if state is not None and state.token is not None:
                token = state.token
                return token.delegate is not None or token.close_authority not in (None, token.owner)
        return False

    def token_change(self, address: str) -> int:
        amounts = [t.amount if (t := self.held(address, side)) else 0 for side in (self.before, self.after)]
        return amounts[1] - amounts[0]

    def mint_of(self, address: str) -> str | None:
        for side in (self.before, self.after):
            state = side.get(address)
            if state is not None and state.token is not None:
                return state.token.mint
        return None

    def rent_in(self, address: str) -> int:
        """Lamports put into an account that became the user's in this transaction, wrapped SOL aside."""
        state = self.after.get(address)
        if state is None or self.was_owned(address):
            return 0
        native = state.token.amount if state.token is not None and state.token.native else 0
        return max(state.lamports - native - self.lamports(address, self.before), 0)


@dataclass(frozen=True)
class Move:
    """One transfer made inside the pinned program's instruction: tokens, or lamports (`lamports` True)."""

    top_level: int
    source: str
    destination: str
    amount: int
    lamports: bool


def strategy_moves(resolved: Resolved, inner: Inner, pinned: str | None) -> list[Move]:
    """Token and SOL transfers made inside the pinned program's top-level instructions."""
    moves: list[Move] = []
    if pinned is None:
        return moves
    keys = resolved.keys
    for top in range(len(resolved.instructions)):
        if resolved.program(top) != pinned:
            continue
        for program_index, accounts, data in inner.get(top, ()):
            program = keys[program_index]
            named = [keys[a] for a in accounts]
            if program in programs.TOKEN_PROGRAMS and data[:1] in (b"\x03", b"\x0c") and len(data) >= 9:
                to = named[2] if data[0] == 12 else named[1]
                moves.append(Move(top, named[0], to, struct.unpack_from("<Q", data, 1)[0], False))
            elif program == programs.SYSTEM_PROGRAM and data[:4] == b"\x02\x00\x00\x00" and len(data) >= 12:
                moves.append(Move(top, named[0], named[1], struct.unpack_from("<Q", data, 4)[0], True))
    return moves
