"""The library names a listed token by its metadata as the command line does: `learn_tokens` on the
strategy's assets, and `asset="SDX"` in a write resolved through the one write path (`driver.ready`)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

from solders.pubkey import Pubkey

from tests.conftest import writing_client
from yieldcli import tokens
from yieldcli.sandbox.demo import METADATA_TOKENS, SECOND_STRATEGY_ID, demo_keypair

SDX, SBOND = (t[1] for t in METADATA_TOKENS)


def test_learn_tokens_names_the_listed_ones_not_built_in(sandbox, journal):
    with writing_client(sandbox, journal, strategy=SECOND_STRATEGY_ID) as client:
        learned = client.learn_tokens(client.strategy().assets)
    assert {(t.symbol, t.mint, t.decimals, t.name) for t in learned} == {
        ("SDX", SDX, 6, "Sandbox Dollar"),
        ("SBOND", SBOND, 6, "Sandbox Bond"),
    }
    assert tokens.by_symbol("sbond").mint == SBOND  # shown by name from then on


def test_a_write_by_a_listed_symbol_needs_no_learning_first(sandbox, journal):
    sandbox.runtime.mint_to(demo_keypair().pubkey(), Pubkey.from_string(SDX), 30_000_000)
    with writing_client(sandbox, journal, strategy=SECOND_STRATEGY_ID) as client:
        prepared = client.deposit("SDX", Decimal("7.25"))
    assert prepared.effect is not None and prepared.effect.ok, prepared.effect
    assert prepared.effect.summary.startswith("deposit 7.25 SDX ")


def test_the_async_client_learns_them_too(sandbox, journal):
    async def learn():
        async with writing_client(sandbox, journal, asynchronous=True, strategy=SECOND_STRATEGY_ID) as client:
            return await client.learn_tokens((await client.strategy()).assets)

    assert {t.symbol for t in asyncio.run(learn())} == {"SDX", "SBOND"}
