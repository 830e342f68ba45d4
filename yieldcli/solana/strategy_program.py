"""The sandbox strategy program's interface: addresses, instructions, position accounts, errors.

The program's source and its documentation are in yieldcli/sandbox/program/ (README.md there is the
reference). Shared by the sandbox (which builds transactions on it) and the client (which names and
decodes it in reviews).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from solders.instruction import AccountMeta, Instruction
from solders.pubkey import Pubkey

from yieldcli.solana.programs import SANDBOX_STRATEGY_PROGRAM, SYSTEM_PROGRAM, TOKEN_PROGRAM

PROGRAM = Pubkey.from_string(SANDBOX_STRATEGY_PROGRAM)
# The sandbox's yield authority: the only key the program accepts yield from (its seed is public).
YIELD_AUTHORITY = Pubkey.from_string("FbsoAcbkesT2kMGmNwuHSuP1tVUgUaeeccNqSAq4Euey")
AUTHORITY_BUMP = 253

INIT_VAULT, DEPOSIT, WITHDRAW, CLOSE, CREDIT_YIELD = 0, 1, 2, 3, 4
INSTRUCTION_NAMES = {
    INIT_VAULT: "initVault",
    DEPOSIT: "deposit",
    WITHDRAW: "withdraw",
    CLOSE: "close",
    CREDIT_YIELD: "creditYield",
}
WITHDRAW_ALL = 2**64 - 1
MODE_GROSS, MODE_EXCLUDE_FEES = 0, 1
FEE_DIVISOR = 1000  # the fee is 10 bps of the gross, rounded up

POSITION_SIZE = 128
POSITION_MAGIC = b"YSPOSIT1"

ERRORS = {
    1: "InvalidInstruction",
    2: "MissingSignature",
    3: "WrongAccountOwner",
    4: "WrongPda",
    5: "WrongVault",
    6: "NotPositionOwner",
    7: "Overdraw",
    8: "Overflow",
    9: "WrongMint",
    10: "WrongDestination",
    11: "NotYieldAuthority",
    12: "WrongProgram",
    13: "AccountState",
}

_SYSTEM = Pubkey.from_string(SYSTEM_PROGRAM)
_TOKEN = Pubkey.from_string(TOKEN_PROGRAM)


def strategy_key(strategy_id: str) -> bytes:
    """The 32 bytes a strategy id enters the position seeds as: sha256 of its UTF-8 text."""
    return hashlib.sha256(strategy_id.encode("utf-8")).digest()


def authority_address() -> Pubkey:
    return Pubkey.create_program_address([b"authority", bytes([AUTHORITY_BUMP])], PROGRAM)


def vault_address(mint: Pubkey) -> Pubkey:
    return Pubkey.find_program_address([b"vault", bytes(mint)], PROGRAM)[0]


def position_address(user: Pubkey, strategy_id: str, mint: Pubkey) -> Pubkey:
    return Pubkey.find_program_address([b"position", bytes(user), strategy_key(strategy_id), bytes(mint)], PROGRAM)[0]


def withdrawal_fee(gross: int) -> int:
    return -(-gross // FEE_DIVISOR)


# ---- instructions -------------------------------------------------------------------------------


def _payout_accounts(
    signer: Pubkey,
    token_account: Pubkey,
    mint: Pubkey,
    position: Pubkey,
    token_program: Pubkey,
    *,
    signer_writable: bool = False,
) -> list[AccountMeta]:
    return [
        AccountMeta(signer, True, signer_writable),
        AccountMeta(token_account, False, True),
        AccountMeta(mint, False, False),
        AccountMeta(vault_address(mint), False, True),
        AccountMeta(authority_address(), False, False),
        AccountMeta(position, False, True),
        AccountMeta(token_program, False, False),
    ]


# `token_program`: the program that owns the mint (SPL Token or Token-2022); the program refuses any other.
def init_vault(payer: Pubkey, mint: Pubkey, *, token_program: Pubkey = _TOKEN) -> Instruction:
    accounts = [
        AccountMeta(payer, True, True),
        AccountMeta(vault_address(mint), False, True),
        AccountMeta(authority_address(), False, False),
        AccountMeta(mint, False, False),
        AccountMeta(_SYSTEM, False, False),
        AccountMeta(token_program, False, False),
    ]
    return Instruction(PROGRAM, bytes([INIT_VAULT]), accounts)


def deposit(
    user: Pubkey,
    payer: Pubkey,
    source: Pubkey,
    mint: Pubkey,
    strategy_id: str,
    amount: int,
    *,
    token_program: Pubkey = _TOKEN,
) -> Instruction:
    accounts = [
        AccountMeta(user, True, False),
        AccountMeta(payer, True, True),
        AccountMeta(source, False, True),
        AccountMeta(mint, False, False),
        AccountMeta(vault_address(mint), False, True),
        AccountMeta(authority_address(), False, False),
        AccountMeta(position_address(user, strategy_id, mint), False, True),
        AccountMeta(_SYSTEM, False, False),
        AccountMeta(token_program, False, False),
    ]
    return Instruction(PROGRAM, struct.pack("<BQ", DEPOSIT, amount) + strategy_key(strategy_id), accounts)


def withdraw(
    user: Pubkey,
    destination: Pubkey,
    mint: Pubkey,
    strategy_id: str,
    amount: int,
    *,
    exclude_fees: bool = False,
    token_program: Pubkey = _TOKEN,
) -> Instruction:
    """`amount`: the gross taken from the position (WITHDRAW_ALL: all of it), or with exclude_fees what the
    user receives."""
    position = position_address(user, strategy_id, mint)
    data = struct.pack("<BQB", WITHDRAW, amount, MODE_EXCLUDE_FEES if exclude_fees else MODE_GROSS)
    return Instruction(PROGRAM, data, _payout_accounts(user, destination, mint, position, token_program))


def close(
    user: Pubkey, recipient: Pubkey, mint: Pubkey, position: Pubkey, *, token_program: Pubkey = _TOKEN
) -> Instruction:
    accounts = _payout_accounts(user, recipient, mint, position, token_program, signer_writable=True)
    return Instruction(PROGRAM, bytes([CLOSE]), accounts)


def credit_yield(
    source: Pubkey, mint: Pubkey, position: Pubkey, amount: int, *, token_program: Pubkey = _TOKEN
) -> Instruction:
    accounts = _payout_accounts(YIELD_AUTHORITY, source, mint, position, token_program)
    return Instruction(PROGRAM, struct.pack("<BQ", CREDIT_YIELD, amount), accounts)


# ---- position accounts --------------------------------------------------------------------------


@dataclass(frozen=True)
class Position:
    user: str
    strategy_key: bytes
    mint: str
    deposited: int
    balance: int
    bump: int
    vault_bump: int


def parse_position(owner_program: str, data: bytes) -> Position | None:
    """The position an account of the program holds, else None (closed, or not a position)."""
    if owner_program != SANDBOX_STRATEGY_PROGRAM or len(data) != POSITION_SIZE or data[:8] != POSITION_MAGIC:
        return None
    deposited, balance = struct.unpack_from("<QQ", data, 104)
    return Position(
        str(Pubkey.from_bytes(data[8:40])),
        data[40:72],
        str(Pubkey.from_bytes(data[72:104])),
        deposited,
        balance,
        data[120],
        data[121],
    )
