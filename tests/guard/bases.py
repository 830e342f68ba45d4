"""The legitimate starting points: each action as every face orders it (`yieldcli.client.orders`), answered by
the sandbox service's `/tx` endpoints over loopback."""

from __future__ import annotations

import asyncio

from solders.pubkey import Pubkey

from tests.guard.fuzzer import Base
from tests.guard.oracle import Ask
from tests.guard.world import World
from yieldcli.api.sync import ServiceClient
from yieldcli.client import orders
from yieldcli.client.actions import CLOSE, DEPOSIT, WITHDRAW
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, SECOND_STRATEGY_ID
from yieldcli.tokens import by_symbol

SOL = 10**9
USD = 10**6


def _mint(symbol: str) -> str:
    token = by_symbol(symbol)
    assert token is not None
    return token.mint


def legitimate_orders(world: World) -> list[tuple[str, orders.Order]]:
    user = str(world.wallet)

    def deposit(strategy: str, symbol: str, amount: int | None) -> orders.Order:
        return orders.order_for(
            DEPOSIT, strategy_id=strategy, mint=_mint(symbol), wallet=user, payer=user, amount=amount
        )

    def withdraw(strategy: str, symbol: str, amount: int | None, **flags: bool) -> orders.Order:
        mint = _mint(symbol)
        return orders.order_for(
            WITHDRAW, strategy_id=strategy, mint=mint, wallet=user, payer=user, amount=amount, options=flags
        )

    def close(strategy: str, symbol: str, recipient: str | None = None) -> orders.Order:
        mint = _mint(symbol)
        return orders.order_for(
            CLOSE, wallet=user, payer=user, strategy_id=strategy, mint=mint, options={"recipient": recipient}
        )

    return [
        ("deposit 10 USDC", deposit(DEMO_STRATEGY_ID, "USDC", 10 * USD)),
        ("deposit 10 PYUSD (Token-2022, the issuer's extensions)", deposit(DEMO_STRATEGY_ID, "PYUSD", 10 * USD)),
        ("withdraw 5 PYUSD", withdraw(DEMO_STRATEGY_ID, "PYUSD", 5 * USD)),
        ("deposit all JitoSOL", deposit(DEMO_STRATEGY_ID, "JitoSOL", None)),
        ("deposit 1 SOL", deposit(DEMO_STRATEGY_ID, "SOL", SOL)),
        ("deposit 5 JLP (opens a position)", deposit(DEMO_STRATEGY_ID, "JLP", 5 * USD)),
        ("withdraw 100 USDC", withdraw(DEMO_STRATEGY_ID, "USDC", 100 * USD)),
        ("withdraw all USDT", withdraw(DEMO_STRATEGY_ID, "USDT", None)),
        ("withdraw 50 USDC excluding fees", withdraw(SECOND_STRATEGY_ID, "USDC", 50 * USD, exclude_fees=True)),
        ("withdraw 2 SOL unwrapped", withdraw(DEMO_STRATEGY_ID, "SOL", 2 * SOL, unwrap_wsol=True)),
        ("close-account JLP", close(SECOND_STRATEGY_ID, "JLP")),
        ("close-account USDS to a named recipient", close(SECOND_STRATEGY_ID, "USDS", str(world.bystander))),
    ]


def ask_of(order: orders.Order) -> Ask:
    r = order.request
    assert r.strategy_id is not None and r.mint is not None
    recipient = Pubkey.from_string(r.funds_recipient) if r.funds_recipient else None
    return Ask(
        order.action.name, r.strategy_id, Pubkey.from_string(r.mint), r.amount, r.exclude_fees, r.unwrap, recipient
    )


def legitimate_bases(world: World) -> list[Base]:
    """The service's answer for each legitimate order (once: the chain is the same for every case)."""
    api = ServiceClient(world.server.url, world.server.api_key)
    bases = []
    for name, order in legitimate_orders(world):
        obtained = asyncio.run(order.obtain(api.post, ix=False)(None))
        bases.append(Base(name, order.request, ask_of(order), obtained.transaction))
    return bases
