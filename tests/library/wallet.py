"""What the write tests share: a recording confirm callback, and the ledger and journal read back."""

from __future__ import annotations

import asyncio

from tests.conftest import writing_client
from yieldcli.sandbox.demo import DEMO_WALLET
from yieldcli.tokens import by_symbol

USDC = by_symbol("USDC").mint


class Asked:
    """A confirm callback that records what it was asked and answers `answer`."""

    def __init__(self, answer: bool):
        self.answer = answer
        self.questions: list[str] = []
        self.effects: list = []

    def __call__(self, text, prepared) -> bool:
        self.questions.append(text)
        self.effects.append(prepared.effect)
        return self.answer


def async_wallet(sandbox, journal):
    """An `AsyncClient` that can write, as the `wallet` fixture's `Client`: `async with async_wallet(...)`."""
    return writing_client(sandbox, journal, asynchronous=True)


def landed(sandbox, signature: str):
    """The signature's status as the sandbox's RPC reports it (None: never seen)."""
    from yieldcli.chain.rpc.adapter import Rpc

    async def look():
        async with Rpc(sandbox.rpc_url) as rpc:
            return (await rpc.signature_statuses([signature]))[0]

    return asyncio.run(look())


def usdc_balance(sandbox) -> int:
    """The demo wallet's USDC, read from the sandbox's runtime (the ledger the transactions execute on)."""
    from solders.pubkey import Pubkey

    return sandbox.runtime.token_balance(Pubkey.from_string(DEMO_WALLET), Pubkey.from_string(USDC))


def journal_entries(journal) -> list:
    """What the journal holds in flight, read as `yield` reads it."""
    from yieldcli.chain.transact.journal import Journal

    return Journal(journal).entries()
