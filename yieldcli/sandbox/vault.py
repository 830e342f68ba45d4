"""The sandbox strategy's on-chain layout: its vault authority, fund and fee accounts, the record
instruction every transaction ends with, and the token instructions solders does not build."""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Any

from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey

from yieldcli.addresses import is_pubkey
from yieldcli.solana import programs
from yieldcli.sandbox.runtime import LAMPORTS_PER_SOL, SANDBOX_AUTHORITY
from yieldcli.tokens import KNOWN_TOKENS, STRATEGY_PROGRAM_ID, WSOL_MINT

VAULT_AUTHORITY = Keypair.from_seed(hashlib.sha256(b"yield sandbox vault authority").digest())
STRATEGY_PROGRAM = Pubkey.from_string(STRATEGY_PROGRAM_ID)
WITHDRAW_FEE_BPS = 10
COMPUTE_UNIT_LIMIT = 200_000
# What a deposit of native SOL leaves in the wallet for fees (and its rent, when it pays for the WSOL account).
WSOL_RESERVE = 10_000_000
RECORD_PREFIX = "yield"
U64_MAX = 2**64 - 1

TOKEN_KEY = Pubkey.from_string(programs.TOKEN_PROGRAM)
WSOL_KEY = Pubkey.from_string(WSOL_MINT)
VAULT = VAULT_AUTHORITY.pubkey()
MINT_AUTHORITY = SANDBOX_AUTHORITY.pubkey()
CHAIN_MINTS = tuple(t.mint for t in KNOWN_TOKENS)
VAULT_FLOAT = 1_000 * LAMPORTS_PER_SOL
MULTISIG_SIZE = 355
FUND_OWNER_SEED = "yield-fund-owner"


# ---- addresses and fees --------------------------------------------------------------------------


def _seed(*parts: str) -> str:
    # create_with_seed takes at most 32 bytes of seed.
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def fund_seed(wallet: str, strategy_id: str, mint: str) -> str:
    return _seed(wallet, strategy_id, mint)


def fund_account_address(wallet: str, strategy_id: str, mint: str) -> Pubkey:
    """The user's fund account for one strategy and mint (it may not exist yet)."""
    return Pubkey.create_with_seed(Pubkey.from_string(wallet), fund_seed(wallet, strategy_id, mint), TOKEN_KEY)


def fund_owner_address(wallet: str) -> Pubkey:
    """The token multisig owning the user's fund accounts (it may not exist yet)."""
    return Pubkey.create_with_seed(Pubkey.from_string(wallet), FUND_OWNER_SEED, TOKEN_KEY)


def multisig_signers(data: bytes) -> list[str]:
    """The signers a token multisig account lists; [] for anything else."""
    if len(data) != MULTISIG_SIZE or not data[2]:
        return []
    return [str(Pubkey.from_bytes(data[3 + 32 * i : 35 + 32 * i])) for i in range(min(data[1], 11))]


def fee_seed(strategy_id: str, mint: str) -> str:
    return _seed("fee", strategy_id, mint)


def fee_account_address(strategy_id: str, mint: str) -> Pubkey:
    """The strategy's fee account for `mint`: withdrawal fees land here."""
    return Pubkey.create_with_seed(VAULT, fee_seed(strategy_id, mint), TOKEN_KEY)


def withdrawal_fee(amount: int) -> int:
    """WITHDRAW_FEE_BPS of `amount`, rounded up."""
    return -(-amount * WITHDRAW_FEE_BPS // 10_000)


# ---- instructions solders and solana.programs do not build ----------------------------------------


def initialize_account3(account: Pubkey, mint: Pubkey, owner: Pubkey) -> Instruction:
    return Instruction(TOKEN_KEY, bytes([18]) + bytes(owner), [AccountMeta(account, False, True), AccountMeta(mint, False, False)])


def initialize_multisig2(multisig: Pubkey, signers: list[Pubkey], required: int) -> Instruction:
    accounts = [AccountMeta(multisig, False, True), *(AccountMeta(k, False, False) for k in signers)]
    return Instruction(TOKEN_KEY, bytes([19, required]), accounts)


def multisig_transfer_checked(
    source: Pubkey, mint: Pubkey, destination: Pubkey, owner: Pubkey, signer: Pubkey, amount: int, decimals: int
) -> Instruction:
    """TransferChecked from an account a token multisig owns, signed by one of its signers."""
    accounts = [AccountMeta(source, False, True), AccountMeta(mint, False, False), AccountMeta(destination, False, True),
                AccountMeta(owner, False, False), AccountMeta(signer, True, False)]
    return Instruction(TOKEN_KEY, struct.pack("<BQB", 12, amount, decimals), accounts)


def multisig_close_account(account: Pubkey, destination: Pubkey, owner: Pubkey, signer: Pubkey) -> Instruction:
    accounts = [AccountMeta(account, False, True), AccountMeta(destination, False, True), AccountMeta(owner, False, False),
                AccountMeta(signer, True, False)]
    return Instruction(TOKEN_KEY, bytes([9]), accounts)


def record_instruction(kind: str, strategy_id: str, mint: str, user: Pubkey, *numbers: int) -> Instruction:
    """The strategy program's record of what the transaction does, signed by the user."""
    text = ":".join([RECORD_PREFIX, kind, strategy_id, mint, *(str(n) for n in numbers)])
    return Instruction(STRATEGY_PROGRAM, text.encode("utf-8"), [AccountMeta(user, True, False)])


@dataclass(frozen=True)
class Record:
    kind: str  # deposit, withdraw, close
    strategy_id: str
    mint: str
    numbers: tuple[int, ...]


_RECORD_NUMBERS = {"deposit": 1, "withdraw": 2, "close": 0}


def parse_record(data: bytes) -> Record | None:
    """The record an instruction to the strategy program carries, None for anything else."""
    try:
        parts = data.decode("utf-8").split(":")
    except UnicodeDecodeError:
        return None
    if len(parts) < 4 or parts[0] != RECORD_PREFIX or parts[1] not in _RECORD_NUMBERS:
        return None
    kind, strategy_id, mint, numbers = parts[1], parts[2], parts[3], parts[4:]
    if len(numbers) != _RECORD_NUMBERS[kind] or not all(n.isdigit() for n in numbers) or not is_pubkey(mint):
        return None
    return Record(kind, strategy_id, mint, tuple(int(n) for n in numbers))


def instruction_json(ix: Instruction) -> dict[str, Any]:
    """An instruction as the service's `/ix` endpoints give it: keys as arrays of 32 integers."""
    return {
        "program_id": list(bytes(ix.program_id)),
        "accounts": [
            {"pubkey": list(bytes(a.pubkey)), "is_signer": a.is_signer, "is_writable": a.is_writable} for a in ix.accounts
        ],
        "data": list(bytes(ix.data)),
    }


_MAX_TX_BYTES = 1232


def fits_one_transaction(ixs: list[Instruction]) -> bool:
    """Whether the instructions fit one transaction paid by the vault authority (signed by it and the mint authority)."""
    message = MessageV0.try_compile(VAULT, ixs, [], Hash.default())
    return len(bytes(message)) + 1 + 1 + 64 * message.header.num_required_signatures <= _MAX_TX_BYTES


def created_lamports(ix: Instruction) -> int | None:
    """The lamports a System createAccountWithSeed instruction puts in the new account, else None."""
    data = bytes(ix.data)
    if str(ix.program_id) != programs.SYSTEM_PROGRAM or len(data) < 4 or data[:4] != struct.pack("<I", 3):
        return None
    seed_len = struct.unpack_from("<Q", data, 36)[0]
    return struct.unpack_from("<Q", data, 44 + seed_len)[0]


def transfer_lamports(ix: Instruction) -> int | None:
    """The lamports of a System transfer instruction, else None."""
    data = bytes(ix.data)
    if str(ix.program_id) != programs.SYSTEM_PROGRAM or len(data) != 12 or data[:4] != struct.pack("<I", 2):
        return None
    return struct.unpack_from("<Q", data, 4)[0]


@dataclass(frozen=True)
class TokenState:
    mint: str
    owner: str
    amount: int
    close_authority: str | None
