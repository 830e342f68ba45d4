"""The write methods of `Client` and `AsyncClient`, written once (`_Writes`) over the action rows
(`yieldcli.client.actions`): `prepare_action(name, ...)` serves every row, and `deposit`, `withdraw`
and `close_account` are it, typed. Each returns a prepared transaction to look at before `.sign()` or
`.send()`; `transact` runs one write to its outcome with the caller's hooks (the command line's path);
`prepare_transaction` takes a transaction built elsewhere. The client's driver runs each, blocking or
awaited (`yieldcli.client.driver`, the same coroutines either way); solders is loaded at the first write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from collections.abc import Awaitable  # noqa: F401 (named in AsyncClientWrites' base, a string)
    from decimal import Decimal
    from typing import Unpack

    from solders.transaction import VersionedTransaction

    from yieldcli.chain.transact.outcomes import Outcome
    from yieldcli.client.prepared import AsyncPreparedTransaction, ChainSettings, PreparedTransaction
    from yieldcli.client.shared import ReadDefaults, WriteSettings
    from yieldcli.client.writes import CloseArgs, Handed, Hooks, LimitArgs, MoveArgs, WithdrawArgs, Write, WriteOptions

P = TypeVar("P")  # what a write returns: a prepared transaction, or an awaitable of one


class _Writes(Generic[P]):
    """The writes of both clients; `_prepare(what, options)` is the one thing each drives its own way."""

    _api: Any  # the blocking or the asyncio service client
    _reads: ReadDefaults
    _writes: WriteSettings

    def _chain(self) -> ChainSettings:
        return self._writes.settings(self._api.base_url)

    def prepare_action(
        self, action: str, asset: str | None = None, amount: Decimal | str | None = None, **args: Any
    ) -> P:
        """Prepare the action called `action` (a row of `yieldcli.client.actions`: "deposit", "withdraw",
        "close-account", ...) of `asset`: its amount in token units (a Decimal, exact), `raw=` base units
        or `all=True` when it takes one; its own options by keyword; and every write's keywords, as
        `deposit` says. An unknown action is refused."""
        from yieldcli.client.actions import action_named
        from yieldcli.client.writes import write_from_keywords

        row = action_named(action)
        rest = dict(args)
        given = rest.pop("strategy", None)
        # A fund account named by its address needs no strategy: the account says which.
        strategy = given if rest.get("account") is not None else self._reads.strategy_id(given)
        return self._prepare(*write_from_keywords(row, asset, amount, rest, strategy))

    def deposit(self, asset: str, amount: Decimal | str | None = None, **args: Unpack[MoveArgs]) -> P:
        """Prepare a deposit of `amount` token units (a Decimal, exact), `raw=` base units, or `all=True`;
        `strategy`, `wallet` (default: the keypair's), `payer` (default: the wallet), `token_account`.
        `ix`: compiled from the service's instructions; `nonce`: build on this durable-nonce account,
        whose authority is the keypair unless `nonce_authority` names another (a Keypair or keypair
        file signs here, a public key signs later). Limits: priority_fee ("auto" or micro-lamports per
        compute unit), max_fee and max_sol_cost (lamports), commitment, timeout (seconds of waiting),
        strategy_program. Without a keypair (`wallet=` named) it is a review: `.sign()` and `.send()`
        then need one."""
        return self.prepare_action("deposit", asset, amount, **args)

    def withdraw(self, asset: str, amount: Decimal | str | None = None, **args: Unpack[WithdrawArgs]) -> P:
        """Prepare a withdrawal, as `deposit`; `exclude_fees`: receive the full amount, fees come from
        the yield; for SOL, `unwrap_wsol`: it arrives unwrapped, `create_wsol_ata`, `detect_wsol`."""
        return self.prepare_action("withdraw", asset, amount, **args)

    def close_account(self, asset: str | None = None, **args: Unpack[CloseArgs]) -> P:
        """Prepare closing the wallet's fund account for a strategy and asset, or the one named by its
        address (`account=`); what it holds and its rent return to `recipient` (default: the wallet);
        the other arguments as `deposit`'s."""
        return self.prepare_action("close-account", asset, **args)

    def _prepare(self, what: Write | Handed, options: WriteOptions) -> P:
        raise NotImplementedError


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
        `yield tx sign/send --expect ACTION:ASSET[:AMOUNT]` does: `action` one of the rows ("deposit"
        or "withdraw" of `amount` (`raw=`, `all=True`) of `asset`, "close-account" of `asset`), or
        "transaction" (only the fee). `payer`: the fee payer (default: the keypair); `wallet`: a
        co-signer named; `nonce`: its durable nonce. One that landed already is found before it is
        simulated: `.send()` then returns its outcome."""
        from yieldcli.client.writes import WriteOptions, handed

        named = {"payer": payer, "wallet": wallet, "nonce": nonce, "strategy_id": self._reads.strategy}
        what = handed(transaction, action, asset, amount, raw, all, **named)
        return self._prepare(what, WriteOptions(**limits))

    def transact(self, what: Write | Handed, options: WriteOptions, hooks: Hooks) -> Outcome:
        """One write to its outcome in one call, as far as `options` says (review only, sign, or send and
        wait), with `hooks` hearing and answering on the way: `hooks.on_review` sees the review before
        any refusal or question, `hooks.confirm` answers the question before signing (none: nothing is
        signed). `yield deposit` and `yield tx` take this path."""
        from yieldcli.client import driver

        settings = self._chain()
        outcome: Outcome = driver.drive(lambda: driver.run_write(self._api, settings, what, options, hooks))
        return outcome

    def _prepare(self, what: Write | Handed, options: WriteOptions) -> PreparedTransaction:
        from yieldcli.client import driver
        from yieldcli.client.prepared import PreparedTransaction

        settings = self._chain()
        return PreparedTransaction(*driver.drive(lambda: driver.prepare_write(self._api, settings, what, options)))


class AsyncClientWrites(_Writes["Awaitable[AsyncPreparedTransaction]"]):
    """`AsyncClient`'s writes, awaited."""

    async def transact(self, what: Write | Handed, options: WriteOptions, hooks: Hooks) -> Outcome:
        """`Client.transact`, awaited."""
        from yieldcli.client import driver

        return await driver.run_write(self._api, self._chain(), what, options, hooks)

    async def _prepare(self, what: Write | Handed, options: WriteOptions) -> AsyncPreparedTransaction:
        from yieldcli.client import driver
        from yieldcli.client.prepared import AsyncPreparedTransaction

        return AsyncPreparedTransaction(*await driver.prepare_write(self._api, self._chain(), what, options))
