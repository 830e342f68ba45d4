"""A base asset on Token-2022 from Python: the sandbox's PYUSD-like mint deposited, withdrawn and closed
through `Client`, each checked by the guard and confirmed on the sandbox's real runtime, the balances
read back through the service."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest
from solders.pubkey import Pubkey

from tests.library.wallet import Asked, landed
from yieldcli import Confirmed
from yieldcli.sandbox.demo import DEMO_WALLET, PYUSD_MINT
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)

USD = 10**6
ATA = programs.associated_token_address(
    Pubkey.from_string(DEMO_WALLET), Pubkey.from_string(PYUSD_MINT), Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
)


def held(sandbox) -> int:
    found = sandbox.runtime.get_account(ATA)
    return struct.unpack_from("<Q", bytes(found.data), 64)[0] if found is not None else 0


def pyusd(wallet) -> tuple[int, int | None]:
    (item,) = [b for b in wallet.balances(DEMO_WALLET, asset=PYUSD_MINT).items if b.token_address == PYUSD_MINT]
    return item.total_balance, item.funds


def sent(prepared, sandbox) -> None:
    assert prepared.effect is not None and prepared.effect.ok, prepared.effect.differences
    outcome = prepared.send(confirm=Asked(True))
    assert isinstance(outcome, Confirmed) and landed(sandbox, outcome.signature).err is None


def test_a_token_2022_asset_through_the_client(wallet, sandbox):
    assert held(sandbox) == 500 * USD and pyusd(wallet) == (500 * USD, None)
    deposit = wallet.deposit(PYUSD_MINT, Decimal("12.5"))
    # The decimals (6) come from the Token-2022 mint account on chain: 12.5 is exactly 12_500_000.
    assert deposit.effect.summary.startswith("deposit 12.5 ")
    sent(deposit, sandbox)
    assert held(sandbox) == 487_500_000 and pyusd(wallet) == (500 * USD, 12_500_000)

    sent(wallet.withdraw(PYUSD_MINT, Decimal("2.5"), exclude_fees=True), sandbox)
    assert held(sandbox) == 490 * USD
    remaining = 10 * USD - sp.withdrawal_fee(2_500_000)

    sent(wallet.close_account(PYUSD_MINT), sandbox)
    assert held(sandbox) == 490 * USD + remaining and pyusd(wallet) == (490 * USD + remaining, None)
