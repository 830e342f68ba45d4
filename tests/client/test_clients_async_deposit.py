"""A deposit from an asyncio program: the same pipeline, awaited."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from tests.library.wallet import Asked, async_wallet, journal_entries, usdc_balance
from yieldcli import ConfirmationRequired, Confirmed

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)


def test_an_async_deposit_is_checked_then_confirmed_and_needs_a_yes(sandbox, journal):
    async def bot():
        async with async_wallet(sandbox, journal) as client:
            unasked = await client.deposit("USDC", Decimal("1"))
            with pytest.raises(ConfirmationRequired):
                await unasked.send()
            prepared = await client.deposit("USDC", Decimal("2.5"), priority_fee="auto")
            assert prepared.effect.ok and prepared.effect.summary.startswith("deposit 2.5 USDC")
            return await prepared.send(confirm=Asked(True))

    before = usdc_balance(sandbox)
    outcome = asyncio.run(bot())
    assert isinstance(outcome, Confirmed)
    assert before - usdc_balance(sandbox) == 2_500_000  # the unconfirmed one never went out
    assert journal_entries(journal) == []
