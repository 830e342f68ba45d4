"""The one driver of writes: every face (`Client`, `AsyncClient`, `yield deposit`/`tx`, `yield mcp`)
takes a write from its order to the pipeline (`yieldcli.chain.transact.engine`) here.

Written once, as coroutines: the asyncio client awaits them, the blocking client runs them on a loop
of its own (`on_loop`), the command line runs them with its hooks (the review drawing, the prompt,
the spinner, SIGTERM as cancel). The service's calls may be blocking or awaitable (`_answer`), so the
same code serves both service clients.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from yieldcli import tokens
from yieldcli.chain.transact.engine import Hooks, Prepared, prepare, run
from yieldcli.client import orders

if TYPE_CHECKING:
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.engine import Obtain, TransactOptions, UserRequest
    from yieldcli.chain.transact.outcomes import Outcome
    from yieldcli.client.orders import Order
    from yieldcli.client.prepared import ChainSettings
    from yieldcli.client.writes import Limits, Move, Write


async def answer(body: Any) -> Any:
    """A service call's answer, from a blocking client (the body) or an asyncio one (an awaitable)."""
    return await body if inspect.isawaitable(body) else body


@dataclass
class Ready:
    """A write with everything resolved: what to ask, what it must do, who signs, how far to go."""

    request: UserRequest
    obtain: Obtain
    options: TransactOptions
    signers: Callable[[], Sequence[Signer]]
    needs_rpc: bool = False


async def order_of(api: Any, settings: ChainSettings, move: Move) -> Order:
    """The order of a deposit or withdrawal; an unknown mint's decimals are read first, from its mint
    account on chain (the order itself is built without awaiting anything)."""
    from yieldcli.client.writes import decimals_of_mint, move_order

    mint = tokens.resolve_asset(move.asset, "asset")
    decimals = None
    if move.amount is not None and orders.known_decimals(mint) is None:
        decimals = await decimals_of_mint(mint, settings.rpc_url, settings.timeout)
    return move_order(
        settings,
        move.action,
        move.strategy_id,
        move.asset,
        move.amount,
        move.raw,
        move.everything,
        lambda _mint, _owner: decimals,
        wallet=move.wallet,
        payer=move.payer,
        token_account=move.token_account,
        name=move.name,
        **move.flags,
    )


async def prepare_write(
    api: Any, settings: ChainSettings, what: Order | Move, write: Write, limits: Limits
) -> tuple[Prepared, Outcome | None, ChainSettings]:
    """`Client.deposit`/`withdraw`/`close_account`, blocking or awaited: the order, then prepared."""
    from yieldcli.client.writes import Move

    order = await order_of(api, settings, what) if isinstance(what, Move) else what
    return await prepare_ready(settings, ready_order(settings, api, order, write, limits))


def ready_order(settings: ChainSettings, api: Any, order: Order, write: Write, limits: Limits) -> Ready:
    """The order with its nonce's authority named, obtained from the service, with the options the
    settings and `limits` give: the one place a write's settings become the pipeline's options."""
    from yieldcli.chain.tx.nonce import OnNonce

    extra: list[Signer] = []
    on_nonce = None
    if write.nonce is not None:
        named = None
        if write.nonce_authority is not None:
            named, keypair = write.authority()
            extra += [keypair] if keypair is not None else []
            order = order.signed_also_by(named)
        on_nonce = OnNonce(write.nonce, named)
    ix = write.ix or on_nonce is not None
    obtain = order.obtain(lambda where, body: api.post(where, body), ix=ix, nonce=on_nonce)
    options = settings.options(limits, write.mode, given=False)

    def signers() -> list[Signer]:
        return [settings.need_keypair(), *extra]

    return Ready(order.request, obtain, options, signers, needs_rpc=ix)


def ready_given(settings: ChainSettings, request: UserRequest, obtain: Obtain, write: Write, limits: Limits) -> Ready:
    """A transaction built elsewhere: its cluster is the one its blockhash is known on."""
    options = settings.options(limits, write.mode, given=True)
    return Ready(request, obtain, options, lambda: [settings.need_keypair()])


async def prepare_ready(settings: ChainSettings, ready: Ready) -> tuple[Prepared, Outcome | None, ChainSettings]:
    """Review, simulate and check, for a library caller that signs or sends later: with a keypair the
    signers are checked now (nothing is signed), without one it is a review; this exact transaction
    having landed already is looked for first, as `yield tx send` does, and is then its outcome."""
    from yieldcli.chain.rpc.adapter import Rpc

    signing = settings.keypair is not None
    options = replace(ready.options, sign=signing, send=False, landed_first=True)
    async with Rpc(settings.rpc_url, timeout=settings.timeout, commitment=options.commitment) as rpc:
        journal = settings.journal()
        found = await prepare(
            rpc, settings.rpc_url, ready.request, ready.obtain, options, Hooks(), ready.signers, journal
        )
        if isinstance(found, Prepared):
            return found, None, settings
        # Landed before: no simulation (it would fail for that alone); the review is still shown.
        unsimulated = replace(options, simulate=False, landed_first=False)
        again = await prepare(rpc, settings.rpc_url, ready.request, ready.obtain, unsimulated, Hooks(), ready.signers)
        assert isinstance(again, Prepared)  # without a journal, prepare never looks for a landing
        return again, found, settings


async def run_ready(settings: ChainSettings, ready: Ready, hooks: Hooks) -> Outcome:
    """Prepare and complete in one go on one RPC connection (the command line): the review, the
    refusals, `hooks.confirm`, the signature, the send and the wait; one outcome."""
    from yieldcli.chain.rpc.adapter import Rpc

    options = ready.options
    use_rpc = ready.needs_rpc or options.simulate or options.sign or options.send or options.priority_fee is not None
    rpc = Rpc(settings.rpc_url, timeout=settings.timeout, commitment=options.commitment) if use_rpc else None
    try:
        return await run(
            rpc, settings.rpc_url, ready.request, ready.obtain, options, hooks, ready.signers, settings.journal()
        )
    finally:
        if rpc is not None:
            await rpc.close()


def drive(coroutine: Callable[[], Awaitable[Any]]) -> Any:
    """A coroutine of this module run to its end from blocking code."""
    from yieldcli.client.prepared import on_loop

    return on_loop(coroutine)
