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

from yieldcli.chain.guard.signers import SigningRefused, check_signable
from yieldcli.chain.keys.sign import sign_transaction
from yieldcli.chain.tx.signatures import signature_slots
from yieldcli.errors import ExitCode

USER, SERVICE, STRANGER = Keypair(), Keypair(), Keypair()
PROGRAM = Pubkey.new_unique()
BLOCKHASH = Hash.new_unique()


def tx_for(payer: Keypair, *others: Keypair) -> VersionedTransaction:
    ix = Instruction(PROGRAM, b"", [AccountMeta(k.pubkey(), True, True) for k in (payer, *others)])
    message = MessageV0.try_compile(payer.pubkey(), [ix], [], BLOCKHASH)
    return VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)


def valid_slots(tx: VersionedTransaction) -> list[int]:
    return [slot.index for slot in signature_slots(tx) if slot.valid]


def test_our_own_transaction_is_signable_and_signing_fills_our_slot():
    tx = tx_for(USER)
    check_signable(tx, USER.pubkey(), {USER.pubkey()})
    signed = sign_transaction(tx, [USER])
    assert signed.signed == (USER.pubkey(),) and valid_slots(signed.transaction) == [0] and signed.complete


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


def test_a_slot_already_signed_by_someone_nobody_named_is_refused():
    # A co-signer's signature already in place would let that party decide when the transaction lands.
    tx = sign_transaction(tx_for(USER, SERVICE), [SERVICE]).transaction
    with pytest.raises(SigningRefused) as info:
        check_signable(tx, USER.pubkey(), {USER.pubkey()})
    assert info.value.reason == "unknown_signer" and "already signed" in info.value.message


def test_a_slot_already_signed_by_a_named_signer_is_kept():
    tx = sign_transaction(tx_for(USER, SERVICE), [SERVICE]).transaction
    check_signable(tx, USER.pubkey(), {USER.pubkey(), SERVICE.pubkey()})  # the two-party flow names the other
    signed = sign_transaction(tx, [USER])
    # Only our slot is signed; the service's signature stays byte for byte what it was.
    assert signed.signed == (USER.pubkey(),) and valid_slots(signed.transaction) == [0, 1]
    assert signed.transaction.signatures[1] == tx.signatures[1]


def test_two_of_our_keys():
    tx = tx_for(USER, SERVICE)
    check_signable(tx, USER.pubkey(), [USER.pubkey(), SERVICE.pubkey()])
    signed = sign_transaction(tx, [USER, SERVICE])
    assert signed.signed == (USER.pubkey(), SERVICE.pubkey()) and valid_slots(signed.transaction) == [0, 1]


def test_unsupported_version_is_refused():
    ix = Instruction(PROGRAM, b"", [AccountMeta(USER.pubkey(), True, True)])
    tx = VersionedTransaction(MessageV1.try_compile(USER.pubkey(), [ix], BLOCKHASH), [USER])
    with pytest.raises(SigningRefused) as info:
        check_signable(tx, USER.pubkey(), {USER.pubkey()})
    assert info.value.reason == "unsupported_version"
