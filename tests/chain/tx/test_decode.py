"""Decoding the service's base64 transactions: legacy and v0 accepted, anything else refused as input error."""

from __future__ import annotations

import base64
import json

import pytest
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message, MessageV0, MessageV1
from solders.signature import Signature
from solders.system_program import TransferParams, transfer
from solders.transaction import Transaction, VersionedTransaction

from yieldcli.chain.tx.decode import UndecodableTransaction, decode_transaction, encode_transaction, message_version
from yieldcli.errors import ExitCode

PAYER = Keypair()
OTHER = Keypair()
BLOCKHASH = Hash.new_unique()


def ix():
    return transfer(TransferParams(from_pubkey=PAYER.pubkey(), to_pubkey=OTHER.pubkey(), lamports=1_000_000))


def v0_unsigned() -> VersionedTransaction:
    message = MessageV0.try_compile(PAYER.pubkey(), [ix()], [], BLOCKHASH)
    return VersionedTransaction.populate(message, [Signature.default()])


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_v0_round_trip():
    tx = v0_unsigned()
    text = encode_transaction(tx)
    decoded = decode_transaction(text)
    assert decoded == tx
    assert message_version(decoded) == 0
    assert encode_transaction(decoded) == text


def test_legacy_bytes_become_a_versioned_transaction_with_the_same_bytes():
    legacy = Transaction([PAYER], Message([ix()], PAYER.pubkey()), BLOCKHASH)
    text = b64(bytes(legacy))
    decoded = decode_transaction(text)
    assert isinstance(decoded, VersionedTransaction)
    assert isinstance(decoded.message, Message)
    assert message_version(decoded) == "legacy"
    assert encode_transaction(decoded) == text
    assert decoded.verify_with_results() == [True]


def test_accepts_json_string_literal_bytes_and_line_breaks():
    text = encode_transaction(v0_unsigned())
    assert decode_transaction(json.dumps(text)) == v0_unsigned()
    assert decode_transaction(text.encode()) == v0_unsigned()
    wrapped = "\n".join(text[i : i + 60] for i in range(0, len(text), 60)) + "\n"
    assert decode_transaction(wrapped) == v0_unsigned()


@pytest.mark.parametrize("text", ["not base64!", "AAA", "", "   "])
def test_refuses_text_that_is_not_base64(text):
    with pytest.raises(UndecodableTransaction) as info:
        decode_transaction(text)
    assert info.value.exit_code == ExitCode.USAGE


def test_refuses_bytes_that_are_not_a_transaction():
    with pytest.raises(UndecodableTransaction, match="is not a serialized Solana transaction"):
        decode_transaction(b64(b"\x01" + b"hello world" * 3))


def test_refuses_trailing_bytes():
    with pytest.raises(UndecodableTransaction, match="trailing bytes"):
        decode_transaction(b64(bytes(v0_unsigned()) + b"\x00\x01"))


def test_refuses_message_v1():
    message = MessageV1.try_compile(PAYER.pubkey(), [ix()], BLOCKHASH)
    tx = VersionedTransaction(message, [PAYER])
    with pytest.raises(UndecodableTransaction, match="version 1 is not supported"):
        decode_transaction(b64(bytes(tx)))


def test_refuses_unknown_version_prefix():
    raw = bytearray(bytes(v0_unsigned()))
    raw[1 + 64] = 0x85  # version 5
    with pytest.raises(UndecodableTransaction, match="version 5 is not supported"):
        decode_transaction(b64(bytes(raw)))


def test_refuses_signature_count_that_does_not_match_the_header():
    tx = v0_unsigned()
    raw = bytes([2]) + bytes(64) + bytes(tx)[1:]
    with pytest.raises(UndecodableTransaction):
        decode_transaction(b64(raw))
