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
from typing import TYPE_CHECKING, Any

from yieldcli.chain.keys.keypairs import load_signer
from yieldcli.chain.transact.engine import Hooks, complete
from yieldcli.chain.transact.journal import Journal
from yieldcli.chain.transact.outcomes import Signed
from yieldcli.client import orders
from yieldcli.environment import Environment
from yieldcli.errors import UsageError
from yieldcli.trust import default_trust_path

if TYPE_CHECKING:
    from solders.keypair import Keypair
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.fees.compute_budget import FeeSummary
    from yieldcli.chain.guard.intent import Check
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.engine import Hooks, Prepared, TransactOptions
    from yieldcli.chain.transact.journal import Journal
    from yieldcli.chain.transact.outcomes import Outcome, Signed
    from yieldcli.chain.tx.review import Review

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

    def applied(self, options: TransactOptions) -> TransactOptions:
        """`options` with the client's strategy program (a write's own wins) and trusted destinations."""
        return replace(
            options,
            strategy_program=options.strategy_program or self.strategy_program,
            trust_file=str(self.trust_file) if self.trust_file is not None else None,
        )

    def need_keypair(self) -> Signer:
        if self.keypair is None:
            raise UsageError(
                "no keypair: create the client with keypair= (a Keypair, a keypair file or a Ledger)",
                kind="usage.no_keypair",
            )
        return self.keypair

    def journal(self) -> Journal:
        return Journal(self.journal_path)


def chain_settings(
    api_url: str,
    rpc_url: str | None,
    keypair: Signer | Keypair | str | Path | None,
    journal_path: str | Path | None,
    timeout: float,
    strategy_program: str | None = None,
    trust_file: str | Path | None = None,
) -> ChainSettings:
    """The same defaults as `yield`: the journal in its data folder, the trusted destinations in its
    config folder, mainnet-beta unless the service is local."""
    if isinstance(keypair, (str, Path)):
        # A keypair URL (`usb://ledger?key=0`) stays a string: a Path would fold its `//`.
        keypair = load_signer(keypair if isinstance(keypair, str) else str(keypair.expanduser())).signer

    path = Path(journal_path) if journal_path is not None else orders.journal_path(Environment())
    trusted = Path(trust_file).expanduser() if trust_file is not None else default_trust_path(Environment())
    return ChainSettings(
        rpc_url or "", keypair, path, timeout, orders.expected_cluster(api_url), strategy_program, trusted
    )


class _Reviewed:
    """What a prepared transaction shows before anything is signed."""

    def __init__(self, prepared: Prepared, settings: ChainSettings):
        self._prepared = prepared
        self._settings = settings

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
        return self._prepared.result

    @property
    def message_hash(self) -> str | None:
        """With a Ledger: the hash it shows when it blind-signs (base58 of the message's SHA-256), to compare."""
        value = self._prepared.result.get("message_hash")
        return str(value) if value is not None else None

    def _completion(
        self, send: bool, confirm: Confirm | None, wait: bool = True, again: bool = False
    ) -> tuple[Prepared, Hooks]:
        """A fresh copy to complete (a prepared transaction can be signed, then sent), and its hooks."""
        options = replace(self._prepared.options, sign=not send, send=send, wait=wait, again=again)
        return replace(self._prepared, options=options, result=dict(self._prepared.result)), Hooks(confirm=confirm)


class PreparedTransaction(_Reviewed):
    """A transaction the service built for a request, reviewed and checked; nothing is signed yet."""

    def sign(self, confirm: Confirm | None = None) -> Signed:
        """Sign our slots after `confirm(prompt, prepared)` says yes; not sent."""
        outcome = self._complete(*self._completion(False, confirm))
        assert isinstance(outcome, Signed)
        return outcome

    def send(
        self,
        confirm: Confirm | None = None,
        *,
        wait: bool = True,
        again: bool = False,
        progress: Progress | None = None,
    ) -> Outcome:
        """Sign after `confirm` says yes, send once, wait: Confirmed, Failed, Expired, Pending (or Sent
        with wait=False). `again`: send although an earlier transaction for this wallet landed since.
        `progress(stage, commitment)` hears how the wait goes ("waiting", the commitment seen so far)."""
        return self._complete(*_heard(self._completion(True, confirm, wait, again), progress))

    def _complete(self, prepared: Prepared, hooks: Hooks) -> Outcome:
        outcome: Outcome = on_rpc(
            self._settings.rpc_url,
            self._settings.timeout,
            prepared.options.commitment,
            lambda rpc: complete(rpc, prepared, hooks, self._settings.journal()),
        )
        return outcome


class AsyncPreparedTransaction(_Reviewed):
    """`PreparedTransaction` for asyncio: `await prepared.send(confirm=...)`."""

    async def sign(self, confirm: Confirm | None = None) -> Signed:
        outcome = await self._complete(*self._completion(False, confirm))
        assert isinstance(outcome, Signed)
        return outcome

    async def send(
        self,
        confirm: Confirm | None = None,
        *,
        wait: bool = True,
        again: bool = False,
        progress: Progress | None = None,
    ) -> Outcome:
        return await self._complete(*_heard(self._completion(True, confirm, wait, again), progress))

    async def _complete(self, prepared: Prepared, hooks: Hooks) -> Outcome:
        from yieldcli.chain.rpc.adapter import Rpc

        async with Rpc(
            self._settings.rpc_url, timeout=self._settings.timeout, commitment=prepared.options.commitment
        ) as rpc:
            return await complete(rpc, prepared, hooks, self._settings.journal())


def _heard(completion: tuple[Prepared, Hooks], progress: Progress | None) -> tuple[Prepared, Hooks]:
    """`completion` with its hooks telling `progress` how the wait goes."""
    prepared, hooks = completion
    return (prepared, hooks) if progress is None else (prepared, replace(hooks, progress=progress))


def on_rpc(rpc_url: str, timeout: float, commitment: str, step: Callable[[Any], Any]) -> Any:
    """One pipeline step on its own event loop and RPC connection (a blocking client has no loop of its own)."""
    from yieldcli.chain.rpc.adapter import Rpc

    async def run() -> Any:
        async with Rpc(rpc_url, timeout=timeout, commitment=commitment) as rpc:
            return await step(rpc)

    return on_loop(run)


def on_loop(run: Callable[[], Awaitable[Any]]) -> Any:
    """`run()` to completion on an event loop of its own (a blocking client has none)."""

    async def main() -> Any:
        return await run()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    # Called from a running event loop (a notebook, an async application): on a thread of its own.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, main()).result()
