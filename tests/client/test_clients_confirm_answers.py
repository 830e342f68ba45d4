"""Only a confirm callback that answers True signs: an async callback is awaited, and any answer that
is not True or False (a coroutine never run, "no", None, NotImplemented) is refused before signing."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from tests.library.wallet import async_wallet, journal_entries, usdc_balance
from yieldcli import Confirmed, Declined, UsageError

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)


@pytest.mark.parametrize("answer", ["no", "yes", None, NotImplemented, 1, [True]])
def test_an_answer_that_is_not_a_bool_signs_nothing(wallet, sandbox, journal, answer):
    before = usdc_balance(sandbox)
    with pytest.raises(UsageError, match="not True or False: nothing was signed") as info:
        wallet.deposit("USDC", Decimal("1")).send(confirm=lambda text, review: answer)
    assert info.value.kind == "usage.confirm"
    assert usdc_balance(sandbox) == before and journal_entries(journal) == []


def test_an_async_callback_is_awaited_by_the_client(wallet, sandbox, journal):
    asked: list[str] = []

    async def no(text, review):
        asked.append(text)
        return False

    async def yes(text, review):
        asked.append(text)
        return True

    before = usdc_balance(sandbox)
    with pytest.raises(Declined, match="nothing was signed"):
        wallet.deposit("USDC", Decimal("1")).send(confirm=no)
    assert usdc_balance(sandbox) == before and len(asked) == 1
    assert asked[0].startswith("Sign and send this deposit? (valid for about ")
    assert isinstance(wallet.deposit("USDC", Decimal("1")).send(confirm=yes), Confirmed)
    assert before - usdc_balance(sandbox) == 1_000_000 and len(asked) == 2


def test_an_async_callback_is_awaited_by_the_async_client(sandbox, journal):
    asked: list[str] = []

    async def no(text, review):
        asked.append(text)
        await asyncio.sleep(0)
        return False

    async def attempt():
        async with async_wallet(sandbox, journal) as client:
            await (await client.deposit("USDC", Decimal("1"))).send(confirm=no)

    before = usdc_balance(sandbox)
    with pytest.raises(Declined, match="nothing was signed"):
        asyncio.run(attempt())
    assert len(asked) == 1 and asked[0].startswith("Sign and send this deposit? (valid for about ")
    assert usdc_balance(sandbox) == before and journal_entries(journal) == []
