"""The signing guard: refuse a foreign fee payer, an unnamed signer, an unsupported version."""

from __future__ import annotations

import pytest
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import MessageV0, MessageV1
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from yieldcli.chain.guard import SigningRefused, check_signable
from yieldcli.chain.sign import sign_transaction
from yieldcli.errors import ExitCode

USER, SERVICE, STRANGER = Keypair(), Keypair(), Keypair()
PROGRAM = Pubkey.new_unique()
BLOCKHASH = Hash.new_unique()


def tx_for(payer: Keypair, *others: Keypair) -> VersionedTransaction:
    ix = Instruction(PROGRAM, b"", [AccountMeta(k.pubkey(), True, True) for k in (payer, *others)])
    message = MessageV0.try_compile(payer.pubkey(), [ix], [], BLOCKHASH)
    return VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)


def test_our_own_transaction_is_signable():
    plan = check_signable(tx_for(USER), USER.pubkey(), {USER.pubkey()})
    assert plan.to_sign == (0,)
    assert plan.already_signed == ()


def test_foreign_fee_payer_is_refused():
    with pytest.raises(SigningRefused) as info:
        check_signable(tx_for(STRANGER, USER), USER.pubkey(), {USER.pubkey()})
    assert info.value.reason == "fee_payer_mismatch"
    assert str(STRANGER.pubkey()) in info.value.message and str(USER.pubkey()) in info.value.message
    assert info.value.exit_code == ExitCode.REFUSED


def test_a_signer_the_user_did_not_name_is_refused():
    with pytest.raises(SigningRefused) as info:
        check_signable(tx_for(USER, STRANGER), USER.pubkey(), {USER.pubkey()})
    assert info.value.reason == "unknown_signer"
    assert str(STRANGER.pubkey()) in info.value.message


def test_a_slot_already_signed_by_someone_else_is_kept():
    tx = sign_transaction(tx_for(USER, SERVICE), [SERVICE]).transaction
    plan = check_signable(tx, USER.pubkey(), {USER.pubkey()})
    assert plan.to_sign == (0,)
    assert plan.already_signed == (1,)


def test_an_invalid_foreign_signature_is_refused():
    tx = tx_for(USER, SERVICE)
    forged = VersionedTransaction.populate(tx.message, [Signature.default(), STRANGER.sign_message(b"x")])
    with pytest.raises(SigningRefused, match="present but invalid"):
        check_signable(forged, USER.pubkey(), {USER.pubkey()})


def test_two_of_our_keys():
    plan = check_signable(tx_for(USER, SERVICE), USER.pubkey(), [USER.pubkey(), SERVICE.pubkey()])
    assert plan.to_sign == (0, 1)


def test_unsupported_version_is_refused():
    ix = Instruction(PROGRAM, b"", [AccountMeta(USER.pubkey(), True, True)])
    tx = VersionedTransaction(MessageV1.try_compile(USER.pubkey(), [ix], BLOCKHASH), [USER])
    with pytest.raises(SigningRefused) as info:
        check_signable(tx, USER.pubkey(), {USER.pubkey()})
    assert info.value.reason == "unsupported_version"
