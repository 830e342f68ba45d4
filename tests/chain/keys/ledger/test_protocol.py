"""The Ledger Solana app's protocol as bytes: keypair URLs, derivation paths, chunking, status words,
the HID framing, and which messages need blind signing. (The app itself runs in test_signer_speculos.py.)"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import MessageV0, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from tests.library.node import node_with
from yieldcli.addresses import b58encode
from yieldcli.chain.keys.ledger import protocol
from yieldcli.chain.keys.ledger.errors import LedgerDeclined, LedgerError
from yieldcli.chain.keys.ledger.signer import message_hash, needs_blind_signing
from yieldcli.chain.keys.ledger.transports import hid_frames, hid_unframe
from yieldcli.chain.keys.ledger.urls import parse_ledger_url
from yieldcli.errors import ExitCode, UsageError

WALLET_ID = "7NmQKgPPDM6EjZSLbSVRXDd6UvPN7azaXF5YJNUJpqG9"


@pytest.mark.parametrize(
    "url, levels, wallet",
    [
        ("usb://ledger", (44, 501), None),
        ("usb://ledger?key=0", (44, 501, 0), None),
        ("usb://ledger?key=3/7", (44, 501, 3, 7), None),
        ("usb://ledger?key=1'/2'", (44, 501, 1, 2), None),
        (f"usb://ledger/{WALLET_ID}?key=0/0", (44, 501, 0, 0), WALLET_ID),
        (f"usb://ledger/{WALLET_ID}", (44, 501), WALLET_ID),
    ],
)
def test_keypair_urls_as_the_solana_cli_reads_them(url, levels, wallet):
    parsed = parse_ledger_url(url)
    assert parsed.levels == levels and parsed.wallet_id == wallet
    assert parse_ledger_url(str(parsed)) == parsed


@pytest.mark.parametrize(
    "url",
    [
        "usb://trezor",
        "usb://ledger?key=a",
        "usb://ledger?key=1/2/3",
        "usb://ledger?key=-1",
        "usb://ledger?key=2147483648",
        "usb://ledger?account=0",
        "usb://ledger/notakey?key=0",
        "usb://ledger?key=0&key=1",
    ],
)
def test_bad_keypair_urls_are_usage_errors(url):
    with pytest.raises(UsageError) as caught:
        parse_ledger_url(url)
    assert caught.value.kind == "usage.ledger_url"


def test_paths_are_hardened_big_endian_after_their_count():
    assert protocol.path_bytes((44, 501, 0, 0)).hex() == "048000002c800001f58000000080000000"


def test_get_pubkey_and_configuration_apdus():
    assert protocol.get_configuration_apdus() == [bytes.fromhex("e004000000")]
    assert protocol.get_pubkey_apdus((44, 501)) == [bytes.fromhex("e005000009028000002c800001f5")]
    assert protocol.get_pubkey_apdus((44, 501), confirm=True)[0][2] == 0x01


@pytest.mark.parametrize(
    "size, p2s", [(10, [0x00]), (255 - 18, [0x00]), (300, [0x02, 0x01]), (700, [0x02, 0x03, 0x01])]
)
def test_sign_payload_is_chunked_at_255_bytes(size, p2s):
    message = bytes(range(256)) * 3
    message = message[:size]
    apdus = protocol.sign_message_apdus((44, 501, 0, 0), message)
    assert [a[3] for a in apdus] == p2s
    assert all(a[:3] == bytes([0xE0, 0x06, 0x01]) and a[4] == len(a) - 5 <= 255 for a in apdus)
    payload = b"".join(a[5:] for a in apdus)
    assert payload == bytes([1]) + protocol.path_bytes((44, 501, 0, 0)) + message


@pytest.mark.parametrize(
    "status, kind, code",
    [
        (0x6985, "ledger.declined", ExitCode.DECLINED),
        (0x6808, "ledger.blind_signing_disabled", ExitCode.CONFIG),
        (0x6E00, "ledger.app_not_open", ExitCode.CONFIG),
        (0x6D00, "ledger.app_not_open", ExitCode.CONFIG),
        (0x6511, "ledger.app_not_open", ExitCode.CONFIG),
        (0x5515, "ledger.locked", ExitCode.CONFIG),
        (0x6982, "ledger.locked", ExitCode.CONFIG),
        (0x6A81, "ledger.bad_request", ExitCode.CONFIG),
        (0x6F42, "ledger.status", ExitCode.CONFIG),
    ],
)
def test_status_words_become_typed_errors(status, kind, code):
    with pytest.raises((LedgerError, LedgerDeclined)) as caught:
        protocol.check_status(status)
    assert caught.value.kind == kind and caught.value.exit_code == code
    protocol.check_status(0x9000)


def test_declined_says_nothing_was_signed():
    with pytest.raises(LedgerDeclined, match="^declined on the Ledger; nothing was signed$"):
        protocol.check_status(0x6985)


class Replay:
    """A transport answering from a list: what the app does is tested on the real app in test_signer_speculos.py."""

    def __init__(self, answers):
        self.answers, self.sent = list(answers), []

    def exchange(self, apdu, timeout):
        self.sent.append(apdu)
        return self.answers.pop(0)

    def close(self):
        pass


def test_a_refusal_mid_way_stops_the_chunks():
    transport = Replay([(b"", 0x9000), (b"", 0x6985), (b"", 0x9000)])
    with pytest.raises(LedgerDeclined):
        protocol.SolanaApp(transport, 1).sign_message((44, 501), bytes(700))
    assert len(transport.sent) == 2


def test_configuration_is_read_from_its_five_bytes():
    app = protocol.SolanaApp(Replay([(bytes([1, 0, 1, 9, 0]), 0x9000)]), 1)
    assert app.configuration() == protocol.AppConfiguration(True, 0, "1.9.0")


@pytest.mark.parametrize("size", [0, 5, 57, 58, 59, 200, 1000])
def test_hid_framing_round_trip(size):
    apdu = bytes(i % 251 for i in range(size))
    frames = hid_frames(apdu)
    assert all(len(f) == 64 and f[:3] == b"\x01\x01\x05" for f in frames)
    assert [int.from_bytes(f[3:5], "big") for f in frames] == list(range(len(frames)))
    assert hid_unframe(frames) == apdu
    if len(frames) > 1:
        assert hid_unframe(frames[:-1]) is None


def _message(*instructions: Instruction) -> bytes:
    payer = Keypair().pubkey()
    return bytes(to_bytes_versioned(MessageV0.try_compile(payer, list(instructions), [], Hash.default())))


def test_blind_signing_is_needed_for_a_program_the_app_cannot_show():
    payer, other = Pubkey.new_unique(), Pubkey.new_unique()
    plain = _message(transfer(TransferParams(from_pubkey=payer, to_pubkey=other, lamports=1)))
    assert not needs_blind_signing(plain)
    strategy = Instruction(Pubkey.new_unique(), b"\x01", [])
    assert needs_blind_signing(_message(strategy))


def test_the_message_hash_is_base58_of_sha256():
    message = b"\x80" + bytes(100)
    assert message_hash(message) == b58encode(hashlib.sha256(message).digest())


JS_DIR = Path(__file__).resolve().parents[3] / "js"


def test_the_apdus_are_byte_for_byte_those_of_ledgers_own_library():
    """@ledgerhq/hw-app-solana (Ledger's TypeScript client) encodes the same requests, chunks included."""

    node = node_with("@ledgerhq/hw-app-solana")
    message = bytes((i * 7) % 256 for i in range(700))  # three chunks
    answer = subprocess.run(
        [node, str(JS_DIR / "ledger_apdus.mjs")],
        input=json.dumps({"path": "44'/501'/3'/7'", "message": message.hex()}),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=JS_DIR,
    )
    assert answer.returncode == 0, answer.stderr
    theirs = json.loads(answer.stdout)
    levels = (44, 501, 3, 7)
    assert theirs["configuration"] == [a.hex() for a in protocol.get_configuration_apdus()]
    assert theirs["address"] == [a.hex() for a in protocol.get_pubkey_apdus(levels)]
    assert theirs["address_confirm"] == [a.hex() for a in protocol.get_pubkey_apdus(levels, confirm=True)]
    assert theirs["sign"] == [a.hex() for a in protocol.sign_message_apdus(levels, message)]
    assert len(theirs["sign"]) == 3
