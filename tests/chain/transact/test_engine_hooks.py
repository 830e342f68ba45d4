"""The pipeline as another front end drives it (the command line is one): what it is told, and when."""

from __future__ import annotations

import asyncio
import re

import pytest

from yieldcli.api.sync import ServiceClient
from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.transact.engine import Hooks, TransactOptions, UserRequest, run
from yieldcli.chain.transact.journal import Journal
from yieldcli.chain.transact.obtain import from_service
from yieldcli.chain.transact.outcomes import Confirmed, Unsigned
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET, demo_keypair
from yieldcli.tokens import by_symbol

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)

USDC = by_symbol("USDC").mint


def deposit(sandbox, journal, options: TransactOptions, events: list) -> object:
    api = ServiceClient(sandbox.url, sandbox.api_key)
    params = {
        "strategy_id": DEMO_STRATEGY_ID,
        "base_asset": USDC,
        "user_key": DEMO_WALLET,
        "payer_key": DEMO_WALLET,
        "amount": 1_000_000,
    }
    request = UserRequest(
        "deposit",
        DEMO_WALLET,
        {DEMO_WALLET},
        DEMO_WALLET,
        DEMO_STRATEGY_ID,
        USDC,
        amount=1_000_000,
        checked_as="deposit",
        noun="deposit",
    )
    hooks = Hooks(
        on_review=lambda prepared: events.append(("review", prepared.effect.ok)),
        confirm=lambda text, prepared: events.append(("confirm", text)) is None,
        progress=lambda stage, seen: events.append(("progress", stage)),
        warn=lambda text: events.append(("warn", text)),
    )

    async def go():
        async with Rpc(sandbox.rpc_url) as rpc:
            obtain = from_service(api.post, "/deposit", params, DEMO_WALLET, ix=False)
            return await run(
                rpc, sandbox.rpc_url, request, obtain, options, hooks, lambda: [demo_keypair()], Journal(journal)
            )

    try:
        return asyncio.run(go())
    finally:
        api.close()


def test_the_review_comes_before_the_question_and_the_wait_after_it(sandbox, journal):
    events: list = []
    outcome = deposit(sandbox, journal, TransactOptions(send=True), events)
    assert isinstance(outcome, Confirmed)
    assert events[0] == ("review", True)
    kind, question = events[1]
    # The question says how long the transaction stays valid: about 150 blocks of 400 ms at most.
    assert kind == "confirm" and re.fullmatch(r"Sign and send this deposit\? \(valid for about (\d+) s\)", question), (
        question
    )
    assert 0 < int(re.search(r"about (\d+) s", question).group(1)) <= 61
    assert ("progress", "waiting") in events[2:] and not any(kind == "warn" for kind, _ in events)


def test_a_review_only_run_shows_the_review_and_asks_nothing(sandbox, journal):
    events: list = []
    outcome = deposit(sandbox, journal, TransactOptions(), events)
    assert isinstance(outcome, Unsigned) and outcome.status == "unsigned" and outcome.transaction
    assert events == [("review", True)]
