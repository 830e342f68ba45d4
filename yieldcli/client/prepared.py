"""A prepared transaction from Python, and where and as whom it is signed and sent.

`PreparedTransaction` (blocking) and `AsyncPreparedTransaction` hold the service's transaction with its
review, the intent check's verdict (`effect`) and the fee, nothing signed. `.sign(confirm=...)` and
`.send(confirm=...)` go through the same pipeline as `yield deposit --send` (`yieldcli.chain.transact.engine`):
the refusals before signing, the `confirm` callback (none: nothing is signed), the journal of sent
signatures, one send rebroadcast as the same bytes, the wait, one typed outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from yieldcli.chain.keys.keypairs import load_signer
from yieldcli.chain.transact.engine import Hooks
from yieldcli.chain.transact.journal import Journal
from yieldcli.chain.transact.outcomes import Signed
from yieldcli.client import orders
from yieldcli.client.rebuild import Rebuild, complete_or_rebuild, raise_if_sent
from yieldcli.environment import Environment
from yieldcli.errors import UsageError
from yieldcli.trust import default_trust_path

if TYPE_CHECKING:
    from solders.keypair import Keypair
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.fees.compute_budget import FeeSummary
    from yieldcli.chain.guard.intent import Check
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.engine import Hooks, Prepared
    from yieldcli.chain.transact.journal import Journal
    from yieldcli.chain.transact.outcomes import Outcome, Signed
    from yieldcli.chain.tx.review import Review

S = TypeVar("S")  # what `.sign()` returns: Signed, or an awaitable of it
Out = TypeVar("Out")  # what `.send()` returns: an Outcome, or an awaitable of it
Confirm = Callable[[str, "Prepared"], bool]
Progress = Callable[[str, "str | None"], None]


@dataclass(frozen=True)
class ChainSettings:
    """Where and as whom transactions are signed and sent."""

    rpc_url: str
    keypair: Signer | None  # a solders Keypair, or a key on a Ledger
    journal_path: Path
    timeout: float
    expected_cluster: str | None  # "mainnet-beta" for the public service; None for the sandbox
    strategy_program: str | None = None  # the strategy's program off mainnet, unless a write names its own
    trust_file: Path | None = None  # the destinations trusted for plain transfers on deposits (`yieldcli.trust`)

    # Defaults of the profile or the environment (the command line's): a transaction already signed keeps its fee.
    priority_fee: int | str | None = None
    priority_fee_source: str = "request"  # where that default came from, for the log: env or config
    max_fee: int | None = None
    load_keypair: Callable[[], Signer] | None = None  # the keypair read when first needed (the command line's)

    def need_keypair(self) -> Signer:
        if self.keypair is None and self.load_keypair is not None:
            return self.load_keypair()
        if self.keypair is None:
            raise UsageError(
                "no keypair: create the client with keypair= (a Keypair, a keypair file or a Ledger)",
                kind="usage.no_keypair",
            )
        return self.keypair

    def journal(self) -> Journal:
        # The default journal has its mirror in the config folder, out of an agent's reach (agents.md).
        env = Environment()
        default = self.journal_path == orders.journal_path(env)
        return Journal(self.journal_path, orders.journal_mirror_path(env) if default else None)


def chain_settings(
    api_url: str,
    rpc_url: str | None,
    keypair: Signer | Keypair | str | Path | None,
    journal_path: str | Path | None,
    timeout: float,
    strategy_program: str | None = None,
    trust_file: str | Path | None = None,
    priority_fee: int | str | None = None,
    max_fee: int | None = None,
) -> ChainSettings:
    """The same defaults as `yield`: the journal in its data folder, the trusted destinations in its
    config folder, mainnet-beta unless the service is local."""
    if isinstance(keypair, (str, Path)):
        # A keypair URL (`usb://ledger?key=0`) stays a string: a Path would fold its `//`.
        keypair = load_signer(keypair if isinstance(keypair, str) else str(keypair.expanduser())).signer

    path = Path(journal_path) if journal_path is not None else orders.journal_path(Environment())
    trusted = Path(trust_file).expanduser() if trust_file is not None else default_trust_path(Environment())
    if priority_fee is not None:
        from yieldcli.chain.fees.compute_budget import parse_priority_fee

        priority_fee = parse_priority_fee(str(priority_fee))  # refused now, not at the first write
    return ChainSettings(
        rpc_url or "",
        keypair,
        path,
        timeout,
        orders.expected_cluster(api_url),
        strategy_program,
        trusted,
        priority_fee=priority_fee,
        priority_fee_source="client",
        max_fee=max_fee,
    )


class _Reviewed(Generic[S, Out]):
    """What a prepared transaction shows before anything is signed, and its signing and sending:
    written once, driven blocking or awaited by `_finish` (the same coroutine, `_outcome`)."""

    def __init__(
        self, prepared: Prepared, landed: Outcome | None, settings: ChainSettings, rebuild: Rebuild | None = None
    ):
        self._prepared = prepared
        self._settings = settings
        self._rebuild = rebuild  # a write of the rows: built again when its blockhash passes before the yes
        self._landed = landed  # this exact transaction had landed before it was prepared: its outcome

    @property
    def review(self) -> Review:
        """The decoded transaction: payer, signers, instructions and their accounts."""
        return self._prepared.review

    @property
    def effect(self) -> Check | None:
        """The intent check: `.ok`, `.summary` (one line), `.differences`; None when it could not run."""
        return self._prepared.effect

    @property
    def fee(self) -> FeeSummary | None:
        return self._prepared.fees

    @property
    def transaction(self) -> VersionedTransaction:
        return self._prepared.transaction

    @property
    def result(self) -> dict[str, Any]:
        """Everything as `yield ... -o json` shows it (review, fee, simulation, effect)."""
        return self._landed.result if self._landed is not None else self._prepared.result

    @property
    def message_hash(self) -> str | None:
        """With a Ledger: the hash it shows when it blind-signs (base58 of the message's SHA-256), to compare."""
        value = self._prepared.result.get("message_hash")
        return str(value) if value is not None else None

    def sign(self, confirm: Confirm | None = None) -> S:
        """Sign our slots after `confirm(prompt, prepared)` says yes; not sent."""
        return cast("S", self._finish(self._completion(False, confirm)))

    def send(
        self,
        confirm: Confirm | None = None,
        *,
        wait: bool = True,
        again: bool = False,
        progress: Progress | None = None,
    ) -> Out:
        """Sign after `confirm` says yes, send once, wait: Confirmed, Failed, Expired, Pending (or Sent
        with wait=False). `again`: send although an earlier transaction for this wallet landed since.
        `progress(stage, commitment)` hears how the wait goes ("waiting", the commitment seen so far).
        One that had landed before it was prepared is not sent again: its outcome."""
        return cast("Out", self._finish(_heard(self._completion(True, confirm, wait, again), progress)))

    def _finish(self, completion: tuple[Prepared, Hooks]) -> Any:
        raise NotImplementedError

    def _completion(
        self, send: bool, confirm: Confirm | None, wait: bool = True, again: bool = False
    ) -> tuple[Prepared, Hooks]:
        """A fresh copy to complete (a prepared transaction can be signed, then sent), and its hooks."""
        options = replace(self._prepared.options, sign=not send, send=send, wait=wait, again=again)
        hooks = Hooks(confirm=confirm, when_shown=_Told())
        return replace(self._prepared, options=options, result=dict(self._prepared.result)), hooks

    async def _outcome(self, prepared: Prepared, hooks: Hooks) -> Outcome:
        from yieldcli.chain.rpc.adapter import Rpc

        if self._landed is not None and prepared.options.send:
            return self._landed
        if not prepared.signers and not prepared.nothing_to_sign:
            # Prepared without a keypair: a review, signed by nobody here.
            prepared = replace(prepared, signers=[self._settings.need_keypair()])
        outcome: Outcome | None = None
        try:
            async with Rpc(
                self._settings.rpc_url, timeout=self._settings.timeout, commitment=prepared.options.commitment
            ) as rpc:
                outcome = await complete_or_rebuild(rpc, prepared, hooks, self._settings.journal(), self._rebuild)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise_if_sent(outcome)  # interrupted as the connection closed: the caller still gets the signature
            raise
        assert prepared.options.send or isinstance(outcome, Signed)
        return outcome


class PreparedTransaction(_Reviewed["Signed", "Outcome"]):
    """A transaction the service built for a request, reviewed and checked; nothing is signed yet."""

    def _finish(self, completion: tuple[Prepared, Hooks]) -> Outcome:
        outcome: Outcome = on_loop(lambda: self._outcome(*completion))
        return _told(completion[1], outcome)


class AsyncPreparedTransaction(_Reviewed["Awaitable[Signed]", "Awaitable[Outcome]"]):
    """`PreparedTransaction` for asyncio: `await prepared.send(confirm=...)`."""

    def _finish(self, completion: tuple[Prepared, Hooks]) -> Awaitable[Outcome]:
        async def finish() -> Outcome:
            return _told(completion[1], await self._outcome(*completion))

        return finish()


class _Told:
    """What drops a send's journal record, kept until the outcome is in the caller's hands: a send
    interrupted before that (Ctrl-C as the RPC closes; a notebook's Ctrl-C while the send finishes on
    a thread of its own) keeps its record, for the next send to report."""

    def __init__(self) -> None:
        self._steps: list[Callable[[], None]] = []

    def __call__(self, step: Callable[[], None]) -> None:
        self._steps.append(step)

    def done(self) -> None:
        for step in self._steps:
            step()


def _told(hooks: Hooks, outcome: Outcome) -> Outcome:
    """The outcome, now the caller's: its send's journal record is done with."""
    if isinstance(hooks.when_shown, _Told):
        hooks.when_shown.done()
    return outcome


def _heard(completion: tuple[Prepared, Hooks], progress: Progress | None) -> tuple[Prepared, Hooks]:
    """`completion` with its hooks telling `progress` how the wait goes."""
    prepared, hooks = completion
    return (prepared, hooks) if progress is None else (prepared, replace(hooks, progress=progress))


def on_loop(run: Callable[[], Awaitable[Any]]) -> Any:
    """`run()` to completion on an event loop of its own (a blocking client has none)."""

    async def main() -> Any:
        return await run()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    # Called from a running event loop (a notebook, an async application): on a thread of its own.
    return _on_a_thread(main)


def _on_a_thread(main: Callable[[], Awaitable[Any]]) -> Any:
    """`main()` on a loop of a thread of its own. Ctrl-C in the calling thread (a notebook's interrupt)
    cancels it there and waits for how it ended: a send in flight ends in `SentThenInterrupted` with
    its signature, which the caller gets, never a bare KeyboardInterrupt while the send goes on."""
    from concurrent.futures import ThreadPoolExecutor

    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []

    async def tracked() -> Any:
        task = asyncio.current_task()
        assert task is not None  # run by asyncio.run
        running.append((asyncio.get_running_loop(), task))
        return await main()

    pool = ThreadPoolExecutor(1, thread_name_prefix="yieldcli-loop")
    future = pool.submit(asyncio.run, tracked())
    try:
        while True:
            try:
                return future.result()
            except KeyboardInterrupt:
                if future.done() or future.cancel():  # ended, or never started: nothing was sent
                    raise
                for loop, task in running:
                    loop.call_soon_threadsafe(task.cancel)
            except asyncio.CancelledError:
                raise KeyboardInterrupt from None  # cancelled before anything was sent
    finally:
        pool.shutdown(wait=False)
