"""The sandbox strategy's keys and amounts, and the small instruction helpers its service uses.

Custody is the strategy program's (yieldcli/sandbox/program/, interface in solana/strategy_program):
a PDA-owned vault token account per mint and a position account per (user, strategy, mint). The
sandbox holds one key, the yield authority: it pays for setting the chain up and is the only key
the program accepts yield from.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Any

from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey

from yieldcli.sandbox.demo import METADATA_TOKENS, TOKEN_2022_TOKENS
from yieldcli.sandbox.runtime import LAMPORTS_PER_SOL, SANDBOX_AUTHORITY
from yieldcli.solana import programs, strategy_program
from yieldcli.tokens import KNOWN_TOKENS, WSOL_MINT

VAULT_AUTHORITY = Keypair.from_seed(hashlib.sha256(b"yield sandbox vault authority").digest())
assert VAULT_AUTHORITY.pubkey() == strategy_program.YIELD_AUTHORITY, "the program names this key as its yield authority"
STRATEGY_PROGRAM = strategy_program.PROGRAM
WITHDRAW_FEE_BPS = 10
COMPUTE_UNIT_LIMIT = 200_000
# What a deposit of native SOL leaves in the wallet for fees (and its rent, when it pays for the WSOL account).
WSOL_RESERVE = 10_000_000
U64_MAX = 2**64 - 1

TOKEN_KEY = Pubkey.from_string(programs.TOKEN_PROGRAM)
TOKEN_2022_KEY = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
WSOL_KEY = Pubkey.from_string(WSOL_MINT)
VAULT = VAULT_AUTHORITY.pubkey()
MINT_AUTHORITY = SANDBOX_AUTHORITY.pubkey()
# The mints the sandbox chain holds: the service's tokens (SPL Token), its Token-2022 ones, and the listed
# ones known only by their metadata.
CHAIN_MINTS = (
    *(t.mint for t in KNOWN_TOKENS),
    *(mint for _, mint, _, _ in TOKEN_2022_TOKENS),
    *(mint for _, mint, *_ in METADATA_TOKENS),
)
VAULT_FLOAT = 1_000 * LAMPORTS_PER_SOL

withdrawal_fee = strategy_program.withdrawal_fee


def instruction_json(ix: Instruction) -> dict[str, Any]:
    """An instruction as the service's `/ix` endpoints give it: keys as arrays of 32 integers."""
    return {
        "program_id": list(bytes(ix.program_id)),
        "accounts": [
            {"pubkey": list(bytes(a.pubkey)), "is_signer": a.is_signer, "is_writable": a.is_writable}
            for a in ix.accounts
        ],
        "data": list(bytes(ix.data)),
    }


_MAX_TX_BYTES = 1232


def fits_one_transaction(ixs: list[Instruction]) -> bool:
    """Whether the instructions fit one transaction paid by the vault authority."""
    message = MessageV0.try_compile(VAULT, ixs, [], Hash.default())
    return len(bytes(message)) + 1 + 1 + 64 * message.header.num_required_signatures <= _MAX_TX_BYTES


def transfer_lamports(ix: Instruction) -> int | None:
    """The lamports of a System transfer instruction, else None."""
    data = bytes(ix.data)
    if str(ix.program_id) != programs.SYSTEM_PROGRAM or len(data) != 12 or data[:4] != struct.pack("<I", 2):
        return None
    lamports: int = struct.unpack_from("<Q", data, 4)[0]  # "<Q": a u64
    return lamports


@dataclass(frozen=True)
class TokenState:
    mint: str
    owner: str
    amount: int
    close_authority: str | None
