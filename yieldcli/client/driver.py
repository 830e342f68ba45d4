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

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from yieldcli.chain.transact.engine import Hooks, Prepared, complete, prepare
from yieldcli.client.writes import Handed, order_of

if TYPE_CHECKING:
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.engine import Obtain, TransactOptions, UserRequest
    from yieldcli.chain.transact.journal import Journal
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
    rebuild = None if isinstance(what, Handed) else rebuilder(settings, resolved)
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
        rebuild = None if isinstance(what, Handed) else rebuilder(settings, resolved)
        return await complete_or_rebuild(rpc, prepared, hooks, journal, rebuild)
    finally:
        if rpc is not None:
            await rpc.close()


Rebuild = Callable[[Any, "TransactOptions"], Awaitable["Prepared | Outcome"]]  # (rpc, options) -> built again


def rebuilder(settings: ChainSettings, resolved: Ready) -> Rebuild:
    """How to build a write from an action's row again (the service asked anew), reviewed and checked
    as the first one was; nothing signed."""

    async def rebuild(rpc: Any, options: TransactOptions) -> Prepared | Outcome:
        return await prepare(
            rpc, settings.rpc_url, resolved.request, resolved.obtain, options, Hooks(), resolved.signers
        )

    return rebuild


async def complete_or_rebuild(
    rpc: Any, prepared: Prepared, hooks: Hooks, journal: Journal | None, rebuild: Rebuild | None
) -> Outcome:
    """Complete `prepared`; when the yes came after its blockhash passed (or its nonce moved on) and it
    is a write of the rows (`rebuild`), build it again: doing the same, the question is asked once
    more (never signed without a new yes); doing otherwise, refused, saying what changed. A
    transaction handed over (`rebuild` None) ends in the error, with nothing signed."""
    from yieldcli.chain.transact.lifetime import ReviewExpired, effect_changes
    from yieldcli.chain.transact.outcomes import with_report
    from yieldcli.errors import Refused

    try:
        return await complete(rpc, prepared, hooks, journal)
    except ReviewExpired as expired:
        if rebuild is None or rpc is None:
            raise
        hooks.log(f"built again: {expired.message}")
        again = await rebuild(rpc, prepared.options)
        if not isinstance(again, Prepared):
            return again
        changes = effect_changes(prepared.effect, again.effect)
        if changes:
            raise with_report(
                Refused(
                    "the transaction expired while it was reviewed, and the one built again does not do the "
                    f"same: {'; '.join(changes)}; nothing was signed",
                    hint="run the command again to review the new transaction",
                    kind="refused.rebuilt.changed",
                ),
                again.result,
                "refused",
            ) from None
        note = "It expired while it was reviewed; built again, it does the same. "
        # The review was drawn already: the question is asked again, of the new transaction.
        return await complete(rpc, again, replace(hooks, on_review=lambda _: None), journal, again=note)


def drive(coroutine: Callable[[], Awaitable[Any]]) -> Any:
    """A coroutine of this module run to its end from blocking code."""
    from yieldcli.client.prepared import on_loop

    return on_loop(coroutine)
