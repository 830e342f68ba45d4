"""A deposit from an asyncio program: the same pipeline, awaited."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from tests.library.wallet import Asked, journal_entries, usdc_balance
from yieldcli import AsyncClient, ConfirmationRequired, Confirmed
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair


def test_an_async_deposit_is_checked_then_confirmed_and_needs_a_yes(sandbox, journal):
    async def bot():
        async with AsyncClient(
            api_url=sandbox.url,
            api_key=sandbox.api_key,
            strategy=DEMO_STRATEGY_ID,
            rpc_url=sandbox.rpc_url,
            keypair=demo_keypair(),
            journal_path=journal,
        ) as client:
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
