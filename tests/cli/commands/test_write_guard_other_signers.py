"""A key `yield` signs with besides the wallet and the payer (a durable nonce's own authority, given
with --nonce-authority or nonce_authority=) signs for that nonce and nothing else: a service that adds
an instruction signed by it, or touching what it owns or is the authority of, is refused before any
signature, on the command line and in Python. Found by a fresh attack on the one write path."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from tests.conftest import write_keypair
from yieldcli.solana import programs

SOL = 1_000_000_000
SYSTEM = Pubkey.from_string(programs.SYSTEM_PROGRAM)


def _meta(key: Pubkey, signer: bool, writable: bool) -> dict[str, object]:
    return {"pubkey": list(bytes(key)), "is_signer": signer, "is_writable": writable}


def _added(instruction: dict[str, object]):
    """The service's /ix answer with one more instruction at its end."""

    def change(body: dict[str, object]) -> dict[str, object]:
        key = next(k for k in body if k.endswith("_instructions"))
        body[key] = [*body[key], instruction]  # type: ignore[misc]
        return body

    return change


@pytest.fixture
def cold(world, tmp_path):
    """A nonce account whose authority is a key of its own (kept cold), funded, and the stranger's key."""
    key = Keypair()
    world.runtime.airdrop(key.pubkey(), 5 * SOL)
    made = world.yield_("nonce", "create", "--authority", str(key.pubkey()), "--yes", "-o", "json")
    assert made.code == 0, made.stderr
    return key, write_keypair(tmp_path / "cold.json", key), made.json()["address"]


def _drain(cold_key: Keypair, to: Pubkey) -> dict[str, object]:
    data = list(struct.pack("<IQ", 2, 2 * SOL))  # System Transfer of 2 SOL
    accounts = [_meta(cold_key.pubkey(), True, True), _meta(to, False, True)]
    return {"program_id": list(bytes(SYSTEM)), "accounts": accounts, "data": data}


def _authorize(nonce: str, cold_key: Keypair, to: Pubkey) -> dict[str, object]:
    data = list(struct.pack("<I", 7) + bytes(to))  # AuthorizeNonceAccount to `to`
    accounts = [_meta(Pubkey.from_string(nonce), False, True), _meta(cold_key.pubkey(), True, False)]
    return {"program_id": list(bytes(SYSTEM)), "accounts": accounts, "data": data}


@pytest.mark.parametrize("attack", ["drain", "authorize"])
def test_the_nonce_authoritys_key_signs_for_the_nonce_only_on_the_command_line(world, cold, attack):
    key, key_file, nonce = cold
    stranger = world.stranger
    world.stand_in.doctor_ix = _added(_drain(key, stranger) if attack == "drain" else _authorize(nonce, key, stranger))
    before = (world.runtime.get_balance(key.pubkey()), world.runtime.get_balance(stranger))
    sent = world.yield_(
        "deposit", "--asset", "USDC", "--amount", "1", "--nonce", nonce, "--nonce-authority", key_file,
        "--send", "--yes", "-o", "json",
    )  # fmt: skip
    assert sent.code == 10, sent.stdout + sent.stderr
    assert "signature" not in sent.json() or not sent.json().get("signature")
    assert (world.runtime.get_balance(key.pubkey()), world.runtime.get_balance(stranger)) == before
    shown = world.yield_("nonce", "show", nonce, "-o", "json").json()
    assert shown["authority"] == str(key.pubkey())
    # Without the service's addition the same command goes through: the refusal is the added instruction's.
    world.stand_in.doctor_ix = None
    honest = world.yield_(
        "deposit", "--asset", "USDC", "--amount", "1", "--nonce", nonce, "--nonce-authority", key_file,
        "--send", "--yes", "-o", "json",
    )  # fmt: skip
    assert honest.code == 0 and honest.json()["status"] == "confirmed", honest.stderr


def test_the_nonce_authoritys_key_signs_for_the_nonce_only_in_python(world, cold):
    key, key_file, nonce = cold
    world.stand_in.doctor_ix = _added(_drain(key, world.stranger))
    asked: list[str] = []
    with world.client() as client:
        prepared = client.deposit("USDC", Decimal("1"), nonce=nonce, nonce_authority=key_file)
        assert prepared.effect is not None and not prepared.effect.ok
        assert any(str(key.pubkey())[:4] in d for d in prepared.effect.differences), prepared.effect.differences
        with pytest.raises(Exception) as refused:
            prepared.send(confirm=lambda text, p: asked.append(text) or True)
    assert getattr(refused.value, "exit_code", None) == 10 and asked == []
    assert world.runtime.get_balance(key.pubkey()) == 5 * SOL
