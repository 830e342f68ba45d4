"""The one driver of writes: every face (`Client`, `AsyncClient`, and through them `yield deposit`/`tx`
and `yield mcp`) takes a write from what was asked to the pipeline (`yieldcli.chain.transact.engine`)
here.

Written once, as coroutines: the asyncio client awaits them, the blocking client runs them on a loop
of its own (`on_loop`). `prepare` stops before anything is signed (a `PreparedTransaction` signs or
sends later); `run` prepares and completes on one RPC connection with the caller's hooks (the command
line's review drawing, question and signals). The service's calls may be blocking or awaitable, so the
same code serves both service clients.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from yieldcli.chain.transact.engine import Hooks, Prepared, prepare
from yieldcli.client.prepared import on_loop
from yieldcli.client.rebuild import Rebuild, complete_or_rebuild, raise_if_sent, rebuilder
from yieldcli.client.writes import Handed, order_of

if TYPE_CHECKING:
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.engine import Obtain, TransactOptions, UserRequest
    from yieldcli.chain.transact.outcomes import Outcome
    from yieldcli.client.prepared import ChainSettings
    from yieldcli.client.writes import Write, WriteOptions


@dataclass
class Ready:
    """A write with everything resolved: what to ask, what it must do, who signs, how far to go."""

    request: UserRequest
    obtain: Obtain
    options: TransactOptions
    signers: Callable[[], Sequence[Signer]]
    needs_rpc: bool = False


async def ready(api: Any, settings: ChainSettings, what: Write | Handed, write: WriteOptions) -> Ready:
    """What was asked (an action of the rows, or a transaction handed over), resolved."""
    if isinstance(what, Handed):
        request, obtain = what.request()
        options = write.transact_options(settings, given=True)
        return Ready(request, obtain, options, lambda: [settings.need_keypair()])
    from yieldcli.client.listed_tokens import listed_mint

    mint = await listed_mint(api, settings, what.asset, what.strategy_id)  # `asset="SDX"`: a listed token's symbol
    what = what if mint is None else replace(what, asset=mint, named_as=what.asset)
    return _ready_order(api, settings, await order_of(settings, what), write)


def _ready_order(api: Any, settings: ChainSettings, order: Any, write: WriteOptions) -> Ready:
    """The order with its nonce's authority named, obtained from the service, with the write's options."""
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
    obtain = order.obtain(lambda where, body: api.post(where, body), ix=write.ix, nonce=on_nonce)
    options = write.transact_options(settings, given=False)

    def signers() -> list[Signer]:
        return [settings.need_keypair(), *extra]

    return Ready(order.request, obtain, options, signers, needs_rpc=write.ix)


async def prepare_write(
    api: Any, settings: ChainSettings, what: Write | Handed, write: WriteOptions
) -> tuple[Prepared, Outcome | None, ChainSettings, Rebuild | None]:
    """Review, simulate and check, for a library caller that signs or sends later: with a keypair the
    signers are checked now (nothing is signed), without one it is a review; this exact transaction
    having landed already is looked for first, as `yield tx send` does, and is then its outcome."""
    from yieldcli.chain.rpc.adapter import Rpc

    resolved = await ready(api, settings, what, write)
    rebuild = None if isinstance(what, Handed) else _rebuilder(settings, resolved)
    signing = settings.keypair is not None
    options = replace(resolved.options, sign=signing, send=False, landed_first=True)
    async with Rpc(settings.rpc_url, timeout=settings.timeout, commitment=options.commitment) as rpc:
        journal = settings.journal()
        found = await prepare(
            rpc, settings.rpc_url, resolved.request, resolved.obtain, options, Hooks(), resolved.signers, journal
        )
        if isinstance(found, Prepared):
            return found, None, settings, rebuild
        # Landed before: no simulation (it would fail for that alone); the review is still shown.
        unsimulated = replace(options, simulate=False, landed_first=False)
        again = await prepare(
            rpc, settings.rpc_url, resolved.request, resolved.obtain, unsimulated, Hooks(), resolved.signers
        )
        assert isinstance(again, Prepared)  # without a journal, prepare never looks for a landing
        return again, found, settings, rebuild


async def run_write(
    api: Any, settings: ChainSettings, what: Write | Handed, write: WriteOptions, hooks: Hooks
) -> Outcome:
    """Prepare and complete in one go on one RPC connection: the review, the refusals, `hooks.confirm`,
    the signature, the send and the wait; one outcome."""
    from yieldcli.chain.rpc.adapter import Rpc

    resolved = await ready(api, settings, what, write)
    options = resolved.options
    use_rpc = resolved.needs_rpc or options.simulate or options.sign or options.send or options.priority_fee is not None
    rpc = Rpc(settings.rpc_url, timeout=settings.timeout, commitment=options.commitment) if use_rpc else None
    journal = settings.journal()
    try:
        prepared = await prepare(
            rpc, settings.rpc_url, resolved.request, resolved.obtain, options, hooks, resolved.signers, journal
        )
        if not isinstance(prepared, Prepared):
            return prepared  # this exact transaction had landed before
        rebuild = None if isinstance(what, Handed) else _rebuilder(settings, resolved)
        outcome = await complete_or_rebuild(rpc, prepared, hooks, journal, rebuild)
        if rpc is not None:
            try:
                await rpc.close()
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise_if_sent(outcome)  # the outcome was reached: its signature reaches the caller
                raise
        return outcome
    finally:
        if rpc is not None:
            await rpc.close()


def _rebuilder(settings: ChainSettings, resolved: Ready) -> Rebuild:
    return rebuilder(settings.rpc_url, resolved.request, resolved.obtain, resolved.signers)


def drive(coroutine: Callable[[], Awaitable[Any]]) -> Any:
    """A coroutine of this module run to its end from blocking code."""
    return on_loop(coroutine)
