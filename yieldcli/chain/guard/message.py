"""A message's accounts resolved (lookup tables included) and what its instructions name, for the guard.

Every lookup table a message loads from must have been read: an account that cannot be named cannot be
checked, so an unreadable table is an error here, never a skip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from solders.pubkey import Pubkey

from yieldcli.solana import programs

ADVANCE_NONCE = b"\x04\x00\x00\x00"


class UnresolvedAccounts(ValueError):
    """A lookup table the message loads from was not read (it does not exist, or is too short)."""


@dataclass(frozen=True)
class Resolved:
    """A message's accounts in order (static keys, then lookup-table writable, then readonly) and flags."""

    keys: tuple[str, ...]
    signer: tuple[bool, ...]
    writable: tuple[bool, ...]
    instructions: tuple[tuple[int, tuple[int, ...], bytes], ...]  # (program index, account indexes, data)
    # How many of `keys` the message names itself; those after are loaded from lookup tables, whose
    # contents only the RPC's answer vouches for.
    static_count: int | None = None

    @property
    def loaded(self) -> tuple[str, ...]:
        return self.keys[self.static_count :] if self.static_count is not None else ()

    def program(self, index: int) -> str:
        return self.keys[self.instructions[index][0]]

    def accounts(self, index: int) -> list[str]:
        return [self.keys[a] for a in self.instructions[index][1]]


def resolve(message: Any, lookup_tables: Mapping[str, Sequence[str]] | None = None) -> Resolved:
    """Every account the message names, lookup tables resolved; raise `UnresolvedAccounts` if one cannot be."""
    static = [str(k) for k in message.account_keys]
    header = message.header
    loaded_w: list[str] = []
    loaded_r: list[str] = []
    for lookup in getattr(message, "address_table_lookups", None) or ():
        entries = (lookup_tables or {}).get(str(lookup.account_key))
        for index in (*lookup.writable_indexes, *lookup.readonly_indexes):
            if entries is None or index >= len(entries):
                raise UnresolvedAccounts(
                    f"lookup table {lookup.account_key} could not be read, so account #{index} in it is unknown"
                )
        assert entries is not None  # every index was found above
        loaded_w += [str(entries[i]) for i in lookup.writable_indexes]
        loaded_r += [str(entries[i]) for i in lookup.readonly_indexes]
    signed = header.num_required_signatures
    signer = [i < signed for i in range(len(static))] + [False] * (len(loaded_w) + len(loaded_r))
    writable = (
        [
            i < signed - header.num_readonly_signed_accounts
            if i < signed
            else i < len(static) - header.num_readonly_unsigned_accounts
            for i in range(len(static))
        ]
        + [True] * len(loaded_w)
        + [False] * len(loaded_r)
    )
    instructions = tuple(
        (ix.program_id_index, tuple(bytes(ix.accounts)), bytes(ix.data)) for ix in message.instructions
    )
    return Resolved(tuple(static + loaded_w + loaded_r), tuple(signer), tuple(writable), instructions, len(static))


def lifetime_nonce(resolved: Resolved) -> str | None:
    """The nonce account a durable-nonce transaction advances in its first instruction."""
    if not resolved.instructions:
        return None
    _, accounts, data = resolved.instructions[0]
    if resolved.program(0) == programs.SYSTEM_PROGRAM and data[:4] == ADVANCE_NONCE and accounts:
        return resolved.keys[accounts[0]]
    return None


def token_accounts_opened(
    resolved: Resolved, owner: str, token_programs: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Associated token accounts of `owner` that ATA instructions open: address -> mint. `token_programs`
    (mint -> the program that owns it, read from the chain): an instruction naming another program for
    a mint there opens no account of the user's (the account it names would not be the mint's)."""
    found = {}
    for index, (_, accounts, data) in enumerate(resolved.instructions):
        if resolved.program(index) != programs.ASSOCIATED_TOKEN_PROGRAM or len(accounts) < 6:
            continue
        if data[:1] not in (b"", b"\x00", b"\x01"):
            continue
        ata, who, mint, token_program = (resolved.keys[accounts[i]] for i in (1, 2, 3, 5))
        if token_program != (token_programs or {}).get(mint, token_program):
            continue
        derived = programs.associated_token_address(
            Pubkey.from_string(who), Pubkey.from_string(mint), Pubkey.from_string(token_program)
        )
        if who == owner and str(derived) == ata:
            found[ata] = mint
    return found
