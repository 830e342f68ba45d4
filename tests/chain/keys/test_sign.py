"""Partial signing: our slots only, other signatures kept, bytes identical to a full signing."""

from __future__ import annotations

from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import Transaction, VersionedTransaction

from yieldcli.chain.keys.sign import sign_transaction
from yieldcli.chain.tx.decode import decode_transaction
from yieldcli.chain.tx.signatures import message_bytes

A, B, C = Keypair(), Keypair(), Keypair()
PROGRAM = Pubkey.new_unique()
BLOCKHASH = Hash.new_unique()


def needs_all(*signers: Keypair) -> Instruction:
    return Instruction(PROGRAM, b"go", [AccountMeta(s.pubkey(), True, True) for s in signers])


def unsigned_v0(*signers: Keypair) -> VersionedTransaction:
    message = MessageV0.try_compile(signers[0].pubkey(), [needs_all(*signers)], [], BLOCKHASH)
    return VersionedTransaction.populate(message, [Signature.default()] * len(signers))


def test_v0_message_bytes_carry_the_version_prefix():
    tx = unsigned_v0(A)
    assert message_bytes(tx)[0] == 0x80
    assert message_bytes(tx)[1:] == bytes(tx.message)


def test_partial_then_rest_equals_full_signing_in_any_order():
    tx = unsigned_v0(A, B, C)
    full = VersionedTransaction(tx.message, [A, B, C])
    step = sign_transaction(tx, [B])
    assert step.signed == (B.pubkey(),)
    assert step.missing == (A.pubkey(), C.pubkey())
    assert not step.complete
    step = sign_transaction(step.transaction, [C, A])
    assert step.complete
    assert bytes(step.transaction) == bytes(full)
    assert step.transaction.verify_with_results() == [True, True, True]
    assert decode_transaction(step.to_base64()) == full


def test_existing_signatures_are_kept_and_foreign_keys_ignored():
    tx = unsigned_v0(A, B)
    co_signed = sign_transaction(tx, [B]).transaction
    outsider = Keypair()
    result = sign_transaction(co_signed, [outsider])
    assert result.signed == ()
    assert result.transaction.signatures[1] == co_signed.signatures[1]
    assert result.transaction.signatures[0] == Signature.default()
    assert result.missing == (A.pubkey(),)


def test_signing_twice_is_idempotent():
    tx = unsigned_v0(A)
    once = sign_transaction(tx, [A]).transaction
    assert bytes(sign_transaction(once, [A]).transaction) == bytes(once)


def test_legacy_transactions_sign_to_the_same_bytes_as_solders():
    message = Message.new_with_blockhash([needs_all(A, B)], A.pubkey(), BLOCKHASH)
    expected = Transaction([A, B], message, BLOCKHASH)
    tx = VersionedTransaction.from_bytes(bytes(Transaction.new_unsigned(message)))
    signed = sign_transaction(sign_transaction(tx, [A]).transaction, [B])
    assert bytes(signed.transaction) == bytes(expected)
