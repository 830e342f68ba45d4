"""Well-known program ids, their names, and builders for the few instructions solders does not provide."""

from __future__ import annotations

import struct
from collections.abc import Sequence

from solders.address_lookup_table_account import derive_lookup_table_address
from solders.instruction import AccountMeta, Instruction
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from yieldcli.solana.token_layout import MINT_SIZE as MINT_SIZE
from yieldcli.solana.token_layout import TOKEN_2022_PROGRAM as TOKEN_2022_PROGRAM
from yieldcli.solana.token_layout import TOKEN_ACCOUNT_SIZE as TOKEN_ACCOUNT_SIZE
from yieldcli.solana.token_layout import TOKEN_PROGRAM as TOKEN_PROGRAM
from yieldcli.solana.token_layout import TOKEN_PROGRAMS as TOKEN_PROGRAMS
from yieldcli.solana.token_layout import parse_mint_decimals as parse_mint_decimals
from yieldcli.solana.token_layout import parse_token_account as parse_token_account
from yieldcli.tokens import STRATEGY_PROGRAM_ID

SYSTEM_PROGRAM = "11111111111111111111111111111111"
ASSOCIATED_TOKEN_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111"
MEMO_V1_PROGRAM = "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"
MEMO_PROGRAM = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
ADDRESS_LOOKUP_TABLE_PROGRAM = "AddressLookupTab1e1111111111111111111111111"
# The sandbox's own strategy program (yieldcli/sandbox/program/): a model of a strategy, deployed
# only on the sandbox chain. The real service's program id stays STRATEGY_PROGRAM_ID.
SANDBOX_STRATEGY_PROGRAM = "SandboxStrategy1111111111111111111111111111"

PROGRAM_NAMES: dict[str, str] = {
    SYSTEM_PROGRAM: "System Program",
    TOKEN_PROGRAM: "Token Program",
    TOKEN_2022_PROGRAM: "Token-2022 Program",
    ASSOCIATED_TOKEN_PROGRAM: "Associated Token Account Program",
    COMPUTE_BUDGET_PROGRAM: "Compute Budget Program",
    MEMO_V1_PROGRAM: "Memo Program (v1)",
    MEMO_PROGRAM: "Memo Program",
    ADDRESS_LOOKUP_TABLE_PROGRAM: "Address Lookup Table Program",
    STRATEGY_PROGRAM_ID: "Yield strategy program",
    SANDBOX_STRATEGY_PROGRAM: "Sandbox strategy program",
}

_SYSTEM = Pubkey.from_string(SYSTEM_PROGRAM)
_TOKEN = Pubkey.from_string(TOKEN_PROGRAM)
_ATA = Pubkey.from_string(ASSOCIATED_TOKEN_PROGRAM)
_ALT = Pubkey.from_string(ADDRESS_LOOKUP_TABLE_PROGRAM)
_MEMO = Pubkey.from_string(MEMO_PROGRAM)


def associated_token_address(wallet: Pubkey, mint: Pubkey, token_program: Pubkey = _TOKEN) -> Pubkey:
    return get_associated_token_address(wallet, mint, token_program)


def create_associated_token_account(
    payer: Pubkey, wallet: Pubkey, mint: Pubkey, *, idempotent: bool = True, token_program: Pubkey = _TOKEN
) -> Instruction:
    ata = associated_token_address(wallet, mint, token_program)
    accounts = [
        AccountMeta(payer, True, True),
        AccountMeta(ata, False, True),
        AccountMeta(wallet, False, False),
        AccountMeta(mint, False, False),
        AccountMeta(_SYSTEM, False, False),
        AccountMeta(token_program, False, False),
    ]
    return Instruction(_ATA, bytes([1 if idempotent else 0]), accounts)


def token_transfer_checked(
    source: Pubkey,
    mint: Pubkey,
    destination: Pubkey,
    authority: Pubkey,
    amount: int,
    decimals: int,
    *,
    token_program: Pubkey = _TOKEN,
) -> Instruction:
    accounts = [
        AccountMeta(source, False, True),
        AccountMeta(mint, False, False),
        AccountMeta(destination, False, True),
        AccountMeta(authority, True, False),
    ]
    return Instruction(token_program, struct.pack("<BQB", 12, amount, decimals), accounts)


def token_mint_to(
    mint: Pubkey, account: Pubkey, authority: Pubkey, amount: int, *, token_program: Pubkey = _TOKEN
) -> Instruction:
    accounts = [AccountMeta(mint, False, True), AccountMeta(account, False, True), AccountMeta(authority, True, False)]
    return Instruction(token_program, struct.pack("<BQ", 7, amount), accounts)


def token_sync_native(account: Pubkey, *, token_program: Pubkey = _TOKEN) -> Instruction:
    return Instruction(token_program, bytes([17]), [AccountMeta(account, False, True)])


def token_close_account(
    account: Pubkey, destination: Pubkey, owner: Pubkey, *, token_program: Pubkey = _TOKEN
) -> Instruction:
    accounts = [
        AccountMeta(account, False, True),
        AccountMeta(destination, False, True),
        AccountMeta(owner, True, False),
    ]
    return Instruction(token_program, bytes([9]), accounts)


def memo(text: str, signers: Sequence[Pubkey] = ()) -> Instruction:
    return Instruction(_MEMO, text.encode("utf-8"), [AccountMeta(s, True, False) for s in signers])


def create_lookup_table(authority: Pubkey, payer: Pubkey, recent_slot: int) -> tuple[Instruction, Pubkey]:
    """CreateLookupTable (bincode: u32 tag 0, u64 recent_slot, u8 bump); returns the table address too."""
    table, bump = derive_lookup_table_address(authority, recent_slot)
    accounts = [
        AccountMeta(table, False, True),
        AccountMeta(authority, True, False),
        AccountMeta(payer, True, True),
        AccountMeta(_SYSTEM, False, False),
    ]
    return Instruction(_ALT, struct.pack("<IQB", 0, recent_slot, bump), accounts), table


def extend_lookup_table(table: Pubkey, authority: Pubkey, payer: Pubkey, addresses: Sequence[Pubkey]) -> Instruction:
    """ExtendLookupTable (bincode: u32 tag 2, u64 count, then 32-byte keys)."""
    data = struct.pack("<IQ", 2, len(addresses)) + b"".join(bytes(a) for a in addresses)
    accounts = [
        AccountMeta(table, False, True),
        AccountMeta(authority, True, False),
        AccountMeta(payer, True, True),
        AccountMeta(_SYSTEM, False, False),
    ]
    return Instruction(_ALT, data, accounts)
