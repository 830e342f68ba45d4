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
    from typing import Unpack

    from solders.transaction import VersionedTransaction

    from yieldcli.client.orders import Order
    from yieldcli.client.prepared import AsyncPreparedTransaction, ChainSettings, PreparedTransaction
    from yieldcli.client.shared import ReadDefaults, WriteSettings
    from yieldcli.client.writes import CloseArgs, LimitArgs, Limits, MoveArgs, WithdrawArgs, Write

P = TypeVar("P")  # what a write returns: a prepared transaction, or an awaitable of one


class _Writes(Generic[P]):
    """The writes of both clients; `_run(what, write, limits)` is the one thing each drives its own way."""

    _api: Any  # the blocking or the asyncio service client
    _reads: ReadDefaults
    _writes: WriteSettings

    def _chain(self) -> ChainSettings:
        return self._writes.settings(self._api.base_url)

    def deposit(self, asset: str, amount: Decimal | str | None = None, **args: Unpack[MoveArgs]) -> P:
        """Prepare a deposit of `amount` token units (a Decimal, exact), `raw=` base units, or `all=True`;
        `strategy`, `wallet` (default: the keypair's), `payer` (default: the wallet), `token_account`.
        `ix`: compiled from the service's instructions; `nonce`: build on this durable-nonce account,
        whose authority is the keypair unless `nonce_authority` names another (a Keypair or keypair
        file signs here, a public key signs later). Limits: priority_fee ("auto" or micro-lamports per
        compute unit), max_fee and max_sol_cost (lamports), commitment, timeout (seconds of waiting),
        strategy_program. Without a keypair (`wallet=` named) it is a review: `.sign()` and `.send()`
        then need one."""
        return self._move("deposit", asset, amount, dict(args), {})

    def withdraw(self, asset: str, amount: Decimal | str | None = None, **args: Unpack[WithdrawArgs]) -> P:
        """Prepare a withdrawal, as `deposit`; `exclude_fees`: receive the full amount, fees come from
        the yield; `unwrap_wsol`: SOL arrives unwrapped."""
        rest = dict(args)
        flags = {"exclude_fees": rest.pop("exclude_fees", False), "unwrap_wsol": rest.pop("unwrap_wsol", None)}
        return self._move("withdraw", asset, amount, rest, flags)

    def close_account(self, asset: str, **args: Unpack[CloseArgs]) -> P:
        """Prepare closing the wallet's fund account for a strategy and asset (its rent returns to
        `recipient`, default the wallet); the other arguments as `deposit`'s."""
        from yieldcli.client.writes import close_order

        rest: dict[str, Any] = dict(args)
        named = {k: rest.pop(k, None) for k in ("wallet", "payer", "recipient", "token_account")}
        order = close_order(self._chain(), self._reads.strategy_id(rest.pop("strategy", None)), asset, **named)
        return self._run(order, *_write_and_limits(rest))

    def _move(self, action: str, asset: str, amount: Decimal | str | None, rest: dict[str, Any], flags: Any) -> P:
        from yieldcli.client.writes import Move

        raw, everything = rest.pop("raw", None), rest.pop("all", False)
        strategy_id = self._reads.strategy_id(rest.pop("strategy", None))
        wallet, payer, account = (rest.pop(k, None) for k in ("wallet", "payer", "token_account"))
        what = Move(action, asset, amount, raw, everything, strategy_id, wallet, payer, account, flags)
        return self._run(what, *_write_and_limits(rest))

    def _run(self, what: Order | Any, write: Write, limits: Limits) -> P:
        raise NotImplementedError


def _write_and_limits(rest: dict[str, Any]) -> tuple[Write, Limits]:
    """How the write is built, and its limits; an argument of no write is refused as Python does."""
    from yieldcli.client.writes import Limits, Write

    write = Write(rest.pop("ix", False), rest.pop("nonce", None), rest.pop("nonce_authority", None))
    return write, Limits(**rest)


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

    def _run(self, what: Order | Any, write: Write, limits: Limits) -> PreparedTransaction:
        from yieldcli.client import driver
        from yieldcli.client.prepared import PreparedTransaction

        settings = self._chain()
        found = driver.drive(lambda: driver.prepare_write(self._api, settings, what, write, limits))
        return PreparedTransaction(*found)


class AsyncClientWrites(_Writes["Awaitable[AsyncPreparedTransaction]"]):
    """`AsyncClient`'s writes, awaited."""

    async def _run(self, what: Order | Any, write: Write, limits: Limits) -> AsyncPreparedTransaction:
        from yieldcli.client import driver
        from yieldcli.client.prepared import AsyncPreparedTransaction

        settings = self._chain()
        found = await driver.prepare_write(self._api, settings, what, write, limits)
        return AsyncPreparedTransaction(*found)
