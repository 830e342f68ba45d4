"""Taking money out from Python: withdraw everything, then close the fund account, on the sandbox."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from tests.library.wallet import Asked, journal_entries, usdc_balance
from yieldcli import Confirmed

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)


def test_withdraw_everything_from_an_async_application_then_close_the_account(wallet, sandbox, journal):
    assert isinstance(wallet.deposit("USDC", Decimal("3")).send(confirm=Asked(True)), Confirmed)
    before = usdc_balance(sandbox)

    async def withdraw_in_a_running_loop():
        # A blocking client called from a coroutine (a notebook cell, an async bot) still works.
        return wallet.withdraw("USDC", all=True).send(confirm=withdrawal_asked)

    withdrawal_asked = Asked(True)
    withdrawn = asyncio.run(withdraw_in_a_running_loop())
    assert isinstance(withdrawn, Confirmed)
    assert len(withdrawal_asked.questions) == 1
    assert withdrawal_asked.questions[0].startswith("Sign and send this withdrawal? (valid for about ")
    assert usdc_balance(sandbox) - before >= 2_990_000  # the position back, less at most the withdrawal fee

    closing = wallet.close_account("USDC")
    assert closing.effect.ok and closing.effect.summary.startswith("close the USDC fund account")
    asked = Asked(True)
    assert isinstance(closing.send(confirm=asked), Confirmed)
    assert len(asked.questions) == 1
    assert asked.questions[0].startswith("Sign and send this account closing? (valid for about ")
    assert journal_entries(journal) == []
