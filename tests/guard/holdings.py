"""Everything the user owns or has a claim on, read from raw account bytes: the oracle's eyes.

Written from the layouts alone (the SPL Token and System nonce layouts, the address lookup table's,
the stake account's, and the strategy program's README), never from the guard's code, so a mistake in
the guard cannot hide here too.

An account belongs to the user's holdings when the user's wallet is:
- the account itself (its SOL), or the owner, delegate or close authority of a token account;
- the authority of a durable nonce, the mint or freeze authority of a mint, the authority of a lookup
  table, the staker or withdrawer of a stake account;
- the user of a position of the strategy program.
Each such account is described by a `Holding`: every field the user's claim depends on.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from solders.account import Account
from solders.pubkey import Pubkey

from yieldcli.solana import programs

SYSTEM = Pubkey.from_string(programs.SYSTEM_PROGRAM)
TOKEN_PROGRAMS = {Pubkey.from_string(p) for p in programs.TOKEN_PROGRAMS}
STRATEGY = Pubkey.from_string(programs.SANDBOX_STRATEGY_PROGRAM)
ALT = Pubkey.from_string(programs.ADDRESS_LOOKUP_TABLE_PROGRAM)
STAKE = Pubkey.from_string("Stake11111111111111111111111111111111111111")
POSITION_MAGIC = b"YSPOSIT1"


def _u64(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 8], "little")


def _key(data: bytes, at: int) -> Pubkey:
    return Pubkey.from_bytes(data[at : at + 32])


def _option_key(data: bytes, tag_at: int, key_at: int) -> Pubkey | None:
    return _key(data, key_at) if int.from_bytes(data[tag_at : tag_at + 4], "little") == 1 else None


@dataclass(frozen=True)
class Token:
    """An SPL token account (165 bytes; Token-2022's may be longer)."""

    mint: Pubkey
    owner: Pubkey
    amount: int
    delegate: Pubkey | None
    state: int
    native: int | None
    delegated_amount: int
    close_authority: Pubkey | None


@dataclass(frozen=True)
class Position:
    user: Pubkey
    strategy_key: bytes
    mint: Pubkey
    deposited: int
    balance: int


def token_of(account: Account) -> Token | None:
    data = bytes(account.data)
    if account.owner not in TOKEN_PROGRAMS or len(data) < 165 or (len(data) > 165 and data[165] != 2):
        return None
    if data[108] == 0:  # uninitialized
        return None
    native = _u64(data, 113) if int.from_bytes(data[109:113], "little") == 1 else None
    return Token(
        _key(data, 0),
        _key(data, 32),
        _u64(data, 64),
        _option_key(data, 72, 76),
        data[108],
        native,
        _u64(data, 121),
        _option_key(data, 129, 133),
    )


def position_of(account: Account) -> Position | None:
    data = bytes(account.data)
    if account.owner != STRATEGY or len(data) != 128 or data[:8] != POSITION_MAGIC:
        return None
    return Position(_key(data, 8), data[40:72], _key(data, 72), _u64(data, 104), _u64(data, 112))


def authorities_of(account: Account) -> tuple[Pubkey, ...]:
    """The keys that control an account that is not a token account or a position."""
    data = bytes(account.data)
    if account.owner == SYSTEM and len(data) == 80 and int.from_bytes(data[4:8], "little") == 1:
        return (_key(data, 8),)  # a durable nonce: its authority
    if account.owner in TOKEN_PROGRAMS and len(data) == 82:  # a mint: mint and freeze authority
        return tuple(k for k in (_option_key(data, 0, 4), _option_key(data, 46, 50)) if k is not None)
    if account.owner == ALT and len(data) >= 56 and data[21] == 1:
        return (_key(data, 22),)
    if account.owner == STAKE and len(data) >= 76 and int.from_bytes(data[0:4], "little") in (1, 2):
        return (_key(data, 12), _key(data, 44))
    return ()


@dataclass(frozen=True)
class Holding:
    """One account of the user's holdings, as the user's claim sees it."""

    lamports: int
    owner: Pubkey  # the program that owns the account
    token: Token | None
    position: Position | None
    data_hash: str  # everything else about it (a nonce's value, a mint's supply, ...)

    what: str = "account"  # what sort of account: for people reading a difference

    def kind(self) -> str:
        return "token account" if self.token else "position" if self.position else self.what

    def __str__(self) -> str:
        if self.token is not None:
            return f"{token_text(self.token)}, {self.lamports} lamports"
        if self.position is not None:
            return f"{position_text(self.position)}, {self.lamports} lamports"
        return f"{self.lamports} lamports, owned by {self.owner}, data {self.data_hash or 'empty'}"


def token_text(t: Token) -> str:
    parts = [f"{t.amount} of {t.mint} owned by {t.owner}"]
    parts += [f"delegate {t.delegate} for {t.delegated_amount}"] if t.delegate else []
    parts += [f"close authority {t.close_authority}"] if t.close_authority else []
    parts += [f"state {t.state}"] if t.state != 1 else []
    return ", ".join(parts)


def position_text(p: Position | None) -> str:
    if p is None:
        return "no position"
    return (
        f"position of {p.user} in {p.strategy_key.hex()[:12]} ({p.mint}): deposited {p.deposited}, balance {p.balance}"
    )


def holding(account: Account) -> Holding:
    token, position = token_of(account), position_of(account)
    digest = "" if token or position else hashlib.sha256(bytes(account.data)).hexdigest()[:16]
    return Holding(account.lamports, account.owner, token, position, digest, _what(account))


def _what(account: Account) -> str:
    size = len(account.data)
    if account.owner == SYSTEM:
        return "durable nonce" if size == 80 else "wallet" if size == 0 else "system account"
    if account.owner in TOKEN_PROGRAMS and size == 82:
        return "mint"
    return {ALT: "lookup table", STAKE: "stake account"}.get(account.owner, "account")


_CONTROLLED = {SYSTEM, *TOKEN_PROGRAMS, STRATEGY, ALT, STAKE}  # the owners of accounts a key may control


def is_users(address: Pubkey, account: Account, wallet: Pubkey) -> bool:
    if address == wallet:
        return True
    if account.executable or account.owner not in _CONTROLLED:
        return False
    token = token_of(account)
    if token is not None:
        return wallet in (token.owner, token.delegate, token.close_authority)
    position = position_of(account)
    if position is not None:
        return position.user == wallet
    return wallet in authorities_of(account)


def holdings(accounts: dict[Pubkey, Account], wallet: Pubkey) -> dict[Pubkey, Holding]:
    """The user's holdings among `accounts` (every account of the chain)."""
    return {a: holding(acc) for a, acc in accounts.items() if is_users(a, acc, wallet)}


def strategy_key(strategy_id: str) -> bytes:
    return hashlib.sha256(strategy_id.encode()).digest()
