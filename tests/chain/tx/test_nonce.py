"""Nonce accounts read strictly, and durable-nonce transactions recognised from their message alone."""

from __future__ import annotations

import struct

import pytest
from solders.hash import Hash
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from yieldcli.chain.rpc.types import AccountInfo
from yieldcli.chain.tx.instructions import build_transaction
from yieldcli.chain.tx.nonce import (
    NonceAccount,
    advance_instruction,
    build_on_nonce,
    nonce_lifetime,
    parse_nonce_account,
)
from yieldcli.errors import UsageError
from yieldcli.solana import programs

ADDRESS, AUTHORITY, PAYER = Keypair().pubkey(), Keypair().pubkey(), Keypair().pubkey()
VALUE = Hash.new_unique()
SYSTEM = Pubkey.from_string(programs.SYSTEM_PROGRAM)


def account(data: bytes, owner: Pubkey = SYSTEM) -> AccountInfo:
    return AccountInfo(ADDRESS, 1_447_680, owner, data, False, 0)


def layout(version=1, state=1, authority=AUTHORITY, value=VALUE, fee=5000) -> bytes:
    return struct.pack("<II32s32sQ", version, state, bytes(authority), bytes(value), fee)


def test_parse_an_initialized_nonce_account():
    nonce = parse_nonce_account(account(layout()))
    assert nonce == NonceAccount(ADDRESS, AUTHORITY, VALUE, 5000, 1_447_680)
    assert nonce.to_dict() == {
        "address": str(ADDRESS),
        "authority": str(AUTHORITY),
        "nonce": str(VALUE),
        "lamports_per_signature": 5000,
        "lamports": 1_447_680,
    }


@pytest.mark.parametrize(
    "info, match",
    [
        (account(layout(), owner=Pubkey.from_string(programs.TOKEN_PROGRAM)), "belongs to Tokenkeg"),
        (account(layout()[:79]), "holds 79 bytes"),
        (account(b""), "holds 0 bytes"),
        (account(layout(version=0)), "legacy nonce account"),
        (account(layout(state=0)), "not an initialized nonce account"),
    ],
)
def test_what_is_not_a_nonce_account(info, match):
    with pytest.raises(UsageError, match=match):
        parse_nonce_account(info)


def test_a_transaction_built_on_a_nonce_is_recognised():
    work = transfer(TransferParams(from_pubkey=PAYER, to_pubkey=AUTHORITY, lamports=1))
    tx = build_on_nonce([work], PAYER, NonceAccount(ADDRESS, AUTHORITY, VALUE, 5000, 1))
    message = tx.message
    assert message.recent_blockhash == VALUE
    lifetime = nonce_lifetime(message)
    assert lifetime is not None and (lifetime.account, lifetime.authority, lifetime.value) == (
        ADDRESS,
        AUTHORITY,
        VALUE,
    )
    # The authority signs: it is one of the required signers.
    assert AUTHORITY in list(message.account_keys)[: message.header.num_required_signatures]


def test_a_blockhash_transaction_or_a_late_advance_is_not_a_nonce_transaction():
    work = transfer(TransferParams(from_pubkey=PAYER, to_pubkey=AUTHORITY, lamports=1))
    assert nonce_lifetime(build_transaction([work], PAYER, Hash.new_unique()).message) is None
    late = build_transaction([work, advance_instruction(ADDRESS, AUTHORITY)], PAYER, VALUE).message
    assert nonce_lifetime(late) is None  # the runtime only honours AdvanceNonceAccount as the first instruction
    other_system = build_transaction(
        [transfer(TransferParams(from_pubkey=PAYER, to_pubkey=ADDRESS, lamports=4))], PAYER, VALUE
    )
    assert nonce_lifetime(other_system.message) is None
