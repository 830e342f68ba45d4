"""What the user's keys control and what the pinned strategy program moved, from chain facts.

`controlled` reads account states (as the chain returned them) for the authorities the wallet
holds: token accounts it owns, is delegate of or may close; nonce and stake accounts and mints
whose authority it is; positions the strategy program keeps for it. `strategy_moves` reads the
simulation's inner instructions: the transfers the pinned program made inside its own
instructions, the only way value may leave the user for someone else. Pure.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from solders.pubkey import Pubkey

from yieldcli.chain.instruction_rules import Resolved
from yieldcli.chain.state import State
from yieldcli.solana import programs
from yieldcli.tokens import WSOL_MINT

STAKE_PROGRAM = "Stake11111111111111111111111111111111111111"
NONCE_SIZE = 80
MINT_SIZE = 82
SANDBOX_POSITION_MAGIC = b"YSPOSIT1"

# Inner instructions as the RPC gives them: by top-level index, (program index, account indexes, data).
Inner = Mapping[int, Sequence[tuple[int, tuple[int, ...], bytes]]]


@dataclass(frozen=True)
class Move:
    """One transfer the strategy program made: tokens (mint known from the source) or lamports (mint None)."""

    top_level: int
    source: str
    destination: str
    amount: int
    lamports: bool


def _key(data: bytes, offset: int) -> str:
    return str(Pubkey.from_bytes(data[offset : offset + 32]))


def authority_kind(state: State | None, wallet: str, pinned: str | None) -> str | None:
    """What makes an account the wallet's to control, or None: 'token', 'delegated', 'nonce', 'stake', 'mint',
    'position'."""
    if state is None:
        return None
    if state.token is not None:
        token = state.token
        if token.owner == wallet:
            return "token"
        return "delegated" if wallet in (token.delegate, token.close_authority) else None
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
    if pinned is not None and state.owner == pinned and position_user(state) == wallet:
        return "position"
    return None


def position_user(state: State | None) -> str | None:
    """The user a strategy position belongs to, for the layouts we know (the sandbox program's)."""
    if state is None or len(state.data) < 40 or state.data[:8] != SANDBOX_POSITION_MAGIC:
        return None
    return _key(state.data, 8)


def strategy_moves(resolved: Resolved, inner: Inner, pinned: str | None) -> list[Move]:
    """Token and SOL transfers made inside the pinned program's top-level instructions."""
    moves: list[Move] = []
    if pinned is None:
        return moves
    keys = resolved.keys
    for top, (program_index, _, _) in enumerate(resolved.instructions):
        if keys[program_index] != pinned:
            continue
        for program_index_inner, accounts, data in inner.get(top, ()):
            program = keys[program_index_inner]
            named = [keys[a] for a in accounts]
            if program in programs.TOKEN_PROGRAMS and data[:1] in (b"\x03", b"\x0c") and len(data) >= 9:
                to = named[2] if data[0] == 12 else named[1]
                moves.append(Move(top, named[0], to, struct.unpack_from("<Q", data, 1)[0], False))
            elif program == programs.SYSTEM_PROGRAM and data[:4] == b"\x02\x00\x00\x00" and len(data) >= 12:
                moves.append(Move(top, named[0], named[1], struct.unpack_from("<Q", data, 4)[0], True))
    return moves


def wallet_token_accounts_opened(resolved: Resolved, wallet: str) -> set[str]:
    """Associated token accounts of the wallet that ATA instructions open (they may be closed again in the
    same transaction)."""
    found = set()
    keys = resolved.keys
    for program_index, accounts, data in resolved.instructions:
        if (
            keys[program_index] != programs.ASSOCIATED_TOKEN_PROGRAM
            or len(accounts) < 6
            or data[:1] not in (b"", b"\x00", b"\x01")
        ):
            continue
        ata, owner, mint, token_program = (keys[accounts[i]] for i in (1, 2, 3, 5))
        if (
            owner == wallet
            and str(
                programs.associated_token_address(
                    Pubkey.from_string(owner), Pubkey.from_string(mint), Pubkey.from_string(token_program)
                )
            )
            == ata
        ):
            found.add(ata)
    return found


def wsol_accounts_opened(resolved: Resolved, wallet: str) -> set[str]:
    """The wallet's wrapped-SOL associated token accounts that ATA instructions open."""
    keys, opened = resolved.keys, wallet_token_accounts_opened(resolved, wallet)
    return {
        keys[accounts[1]]
        for program_index, accounts, data in resolved.instructions
        if keys[program_index] == programs.ASSOCIATED_TOKEN_PROGRAM
        and len(accounts) >= 6
        and keys[accounts[3]] == WSOL_MINT
        and keys[accounts[1]] in opened
    }
