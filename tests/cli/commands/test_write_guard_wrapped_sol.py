"""SOL sent into the user's own wrapped-SOL account without being wrapped (no SyncNative) is refused on
every face: it left the wallet's SOL and the token amount alike, so it once passed, and a delegate of
that account could then sync it and take it. Found by a fresh attack."""

from __future__ import annotations

from decimal import Decimal

import pytest
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from tests.cli.stand_in import WALLET
from yieldcli.solana import programs
from yieldcli.tokens import WSOL_MINT

SOL = 1_000_000_000
WSOL_ATA = programs.associated_token_address(WALLET, Pubkey.from_string(WSOL_MINT))


@pytest.fixture
def unwrapped(world):
    """The wallet has a wrapped-SOL account; the service adds 2 SOL into it, unwrapped, to each deposit."""
    if world.runtime.get_account(WSOL_ATA) is None:
        world.runtime.create_associated_token_account(WALLET, Pubkey.from_string(WSOL_MINT))
    sneak = transfer(TransferParams(from_pubkey=WALLET, to_pubkey=WSOL_ATA, lamports=2 * SOL))
    world.doctor(lambda instructions: [*instructions, sneak])
    return world


def test_the_command_line_refuses_it(unwrapped):
    before = unwrapped.runtime.get_balance(WALLET)
    sent = unwrapped.yield_("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")
    assert sent.code == 10, sent.stdout + sent.stderr
    assert any("System Transfer of 2 SOL" in d for d in sent.json()["effect"]["differences"])
    assert unwrapped.runtime.get_balance(WALLET) == before


def test_the_python_client_refuses_it(unwrapped):
    asked: list[str] = []
    with unwrapped.client() as client:
        prepared = client.deposit("USDC", Decimal("1"))
        assert prepared.effect is not None and not prepared.effect.ok
        assert any("sent in without being wrapped" in d for d in prepared.effect.differences)
        with pytest.raises(Exception) as refused:
            prepared.send(confirm=lambda text, p: asked.append(text) or True)
    assert getattr(refused.value, "exit_code", None) == 10 and asked == []
