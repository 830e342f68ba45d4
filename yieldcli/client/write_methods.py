"""The write methods of `Client` and `AsyncClient`: deposit, withdraw, close_account (and, blocking,
prepare_transaction). Written once (`_Writes`): each method says what is asked, and the client's
driver runs it, blocking or awaited (`yieldcli.client.driver`, the same coroutines either way). Each
returns a prepared transaction to look at before `.sign()` or `.send()`; solders is loaded at the
first write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from collections.abc import Awaitable  # noqa: F401 (named in AsyncClientWrites' base, a string)
    from decimal import Decimal
    from pathlib import Path
    from typing import Unpack

    from solders.keypair import Keypair
    from solders.transaction import VersionedTransaction

    from yieldcli.client.orders import Order
    from yieldcli.client.prepared import AsyncPreparedTransaction, ChainSettings, PreparedTransaction
    from yieldcli.client.shared import ReadDefaults, WriteSettings
    from yieldcli.client.writes import LimitArgs, Write

P = TypeVar("P")  # what a write returns: a prepared transaction, or an awaitable of one


class _Writes(Generic[P]):
    """The writes of both clients; `_run(what, write, limits)` is the one thing each drives its own way."""

    _api: Any  # the blocking or the asyncio service client
    _reads: ReadDefaults
    _writes: WriteSettings

    def _chain(self) -> ChainSettings:
        return self._writes.settings(self._api.base_url)

    def deposit(
        self,
        asset: str,
        amount: Decimal | str | None = None,
        *,
        raw: int | None = None,
        all: bool = False,
        strategy: str | None = None,
        wallet: str | None = None,
        payer: str | None = None,
        token_account: str | None = None,
        ix: bool = False,
        nonce: str | None = None,
        nonce_authority: Keypair | str | Path | None = None,
        **limits: Unpack[LimitArgs],
    ) -> P:
        """Prepare a deposit of `amount` token units (a Decimal, exact), `raw=` base units, or `all=True`.
        `nonce`: build on this durable-nonce account (from the service's instructions), whose authority
        is the keypair unless `nonce_authority` names another (a Keypair or keypair file signs here, a
        public key signs later). `limits`: priority_fee ("auto" or micro-lamports per compute unit),
        max_fee and max_sol_cost (lamports), commitment, timeout (seconds of waiting). Without a keypair
        (`wallet=` named) it is a review: `.sign()` and `.send()` then need one."""
        from yieldcli.client.writes import Move

        what = Move("deposit", asset, amount, raw, all, self._reads.strategy_id(strategy), wallet, payer, token_account)
        return self._run(what, _write(ix, nonce, nonce_authority), limits)

    def withdraw(
        self,
        asset: str,
        amount: Decimal | str | None = None,
        *,
        raw: int | None = None,
        all: bool = False,
        strategy: str | None = None,
        wallet: str | None = None,
        payer: str | None = None,
        token_account: str | None = None,
        exclude_fees: bool = False,
        unwrap_wsol: bool | None = None,
        ix: bool = False,
        nonce: str | None = None,
        nonce_authority: Keypair | str | Path | None = None,
        **limits: Unpack[LimitArgs],
    ) -> P:
        """Prepare a withdrawal; `exclude_fees`: receive the full amount, fees come from the yield."""
        from yieldcli.client.writes import Move

        flags = {"exclude_fees": exclude_fees, "unwrap_wsol": unwrap_wsol}
        strategy_id = self._reads.strategy_id(strategy)
        what = Move("withdraw", asset, amount, raw, all, strategy_id, wallet, payer, token_account, flags)
        return self._run(what, _write(ix, nonce, nonce_authority), limits)

    def close_account(
        self,
        asset: str,
        *,
        strategy: str | None = None,
        wallet: str | None = None,
        payer: str | None = None,
        recipient: str | None = None,
        token_account: str | None = None,
        ix: bool = False,
        nonce: str | None = None,
        nonce_authority: Keypair | str | Path | None = None,
        **limits: Unpack[LimitArgs],
    ) -> P:
        """Prepare closing the wallet's fund account for a strategy and asset (its rent returns)."""
        from yieldcli.client.writes import close_order

        order = close_order(
            self._chain(),
            self._reads.strategy_id(strategy),
            asset,
            wallet=wallet,
            payer=payer,
            recipient=recipient,
            token_account=token_account,
        )
        return self._run(order, _write(ix, nonce, nonce_authority), limits)

    def _run(self, what: Order | Any, write: Write, limits: LimitArgs) -> P:
        raise NotImplementedError


def _write(ix: bool, nonce: str | None, nonce_authority: Keypair | str | Path | None) -> Write:
    from yieldcli.client.writes import Write

    return Write(ix, nonce, nonce_authority)


class ClientWrites(_Writes["PreparedTransaction"]):
    """`Client`'s writes: they need its `rpc_url` and, to sign, its `keypair`."""

    def prepare_transaction(
        self,
        transaction: str | bytes | VersionedTransaction,
        action: str = "transaction",
        *,
        asset: str | None = None,
        amount: Decimal | str | None = None,
        raw: int | None = None,
        all: bool = False,
        payer: str | None = None,
        wallet: str | None = None,
        nonce: str | None = None,
        **limits: Unpack[LimitArgs],
    ) -> PreparedTransaction:
        """A transaction built elsewhere (base64 text, bytes, or a VersionedTransaction), reviewed,
        simulated and checked against what it is said to do, then `.sign()`ed or `.send()`ed as
        `yield tx sign/send --expect ACTION:ASSET[:AMOUNT]` does: `action` "deposit" or "withdraw" of
        `amount` (`raw=`, `all=True`) of `asset`, "close-account" of `asset`, or "transaction" (only the fee).
        `payer`: the fee payer (default: the keypair); `wallet`: a co-signer named; `nonce`: its durable nonce.
        One that landed already is found before it is simulated: `.send()` then returns its outcome."""
        from yieldcli.client import driver
        from yieldcli.client.prepared import PreparedTransaction
        from yieldcli.client.writes import Limits, Write, given_order

        settings = self._chain()
        named = {"payer": payer, "wallet": wallet, "nonce": nonce, "strategy": self._reads.strategy}
        request, obtain = given_order(settings, transaction, action, asset, amount, raw, all, **named)
        ready = driver.ready_given(settings, request, obtain, Write(), Limits(**limits))
        return PreparedTransaction(*driver.drive(lambda: driver.prepare_ready(settings, ready)))

    def _run(self, what: Order | Any, write: Write, limits: LimitArgs) -> PreparedTransaction:
        from yieldcli.client import driver
        from yieldcli.client.prepared import PreparedTransaction
        from yieldcli.client.writes import Limits

        settings = self._chain()
        found = driver.drive(lambda: driver.prepare_write(self._api, settings, what, write, Limits(**limits)))
        return PreparedTransaction(*found)


class AsyncClientWrites(_Writes["Awaitable[AsyncPreparedTransaction]"]):
    """`AsyncClient`'s writes, awaited."""

    async def _run(self, what: Order | Any, write: Write, limits: LimitArgs) -> AsyncPreparedTransaction:
        from yieldcli.client import driver
        from yieldcli.client.prepared import AsyncPreparedTransaction
        from yieldcli.client.writes import Limits

        settings = self._chain()
        found = await driver.prepare_write(self._api, settings, what, write, Limits(**limits))
        return AsyncPreparedTransaction(*found)
