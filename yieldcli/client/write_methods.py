"""The write methods of `Client` and `AsyncClient`: deposit, withdraw, close_account (and, blocking,
prepare_transaction). Each builds its order (`yieldcli.client.writes`) and returns a prepared
transaction to look at before `.sign()` or `.send()`; solders is loaded at the first write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from decimal import Decimal
    from pathlib import Path
    from typing import Unpack

    from solders.keypair import Keypair
    from solders.transaction import VersionedTransaction

    from yieldcli.api.aio import AsyncServiceClient
    from yieldcli.api.sync import ServiceClient
    from yieldcli.client.orders import Order
    from yieldcli.client.prepared import AsyncPreparedTransaction, ChainSettings, PreparedTransaction
    from yieldcli.client.shared import ReadDefaults, WriteSettings
    from yieldcli.client.writes import LimitArgs


class ClientWrites:
    """`Client`'s writes: they need its `rpc_url` and `keypair`."""

    _api: ServiceClient
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
    ) -> PreparedTransaction:
        """Prepare a deposit of `amount` token units (a Decimal, exact), `raw=` base units, or `all=True`.
        `nonce`: build on this durable-nonce account (from the service's instructions), whose authority
        is the keypair unless `nonce_authority` names another (a Keypair or keypair file signs here, a
        public key signs later). `limits`: priority_fee ("auto" or micro-lamports per compute unit),
        max_fee and max_sol_cost (lamports), commitment, timeout (seconds of waiting)."""
        return self._move(
            "deposit",
            asset,
            amount,
            raw,
            all,
            strategy,
            wallet,
            payer,
            token_account,
            {},
            ix,
            limits,
            nonce,
            nonce_authority,
        )

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
    ) -> PreparedTransaction:
        """Prepare a withdrawal; `exclude_fees`: receive the full amount, fees come from the yield."""
        flags = {"exclude_fees": exclude_fees, "unwrap_wsol": unwrap_wsol}
        return self._move(
            "withdraw",
            asset,
            amount,
            raw,
            all,
            strategy,
            wallet,
            payer,
            token_account,
            flags,
            ix,
            limits,
            nonce,
            nonce_authority,
        )

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
        `payer`: the fee payer (default: the keypair); `wallet`: a co-signer named; `nonce`: its durable nonce."""
        from yieldcli.client.writes import Limits, given_order, prepare_given

        settings = self._chain()
        named = {"payer": payer, "wallet": wallet, "nonce": nonce, "strategy": self._reads.strategy}
        request, obtain = given_order(settings, transaction, action, asset, amount, raw, all, **named)
        return prepare_given(settings, request, obtain, Limits(**limits))

    def _decimals_of_unknown(self, mint: str, owner: str) -> int | None:
        from yieldcli.client.orders import decimals_in_balances
        from yieldcli.client.writes import decimals_of_mint

        settings = self._chain()
        return decimals_of_mint(
            mint,
            settings.rpc_url,
            settings.timeout,
            lambda: decimals_in_balances(self._api.balances(owner, asset=mint), mint),
        )

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
    ) -> PreparedTransaction:
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
        return self._prepare(order, ix, limits, nonce, nonce_authority)

    def _move(
        self,
        action: str,
        asset: str,
        amount: Decimal | str | None,
        raw: int | None,
        everything: bool,
        strategy: str | None,
        wallet: str | None,
        payer: str | None,
        token_account: str | None,
        flags: dict[str, Any],
        ix: bool,
        limits: LimitArgs,
        nonce: str | None,
        nonce_authority: Keypair | str | Path | None,
    ) -> PreparedTransaction:
        """A deposit or a withdrawal (`action`), prepared; `flags`: the withdrawal's own arguments."""
        from yieldcli.client.writes import move_order

        order = move_order(
            self._chain(),
            action,
            self._reads.strategy_id(strategy),
            asset,
            amount,
            raw,
            everything,
            self._decimals_of_unknown,
            wallet=wallet,
            payer=payer,
            token_account=token_account,
            **flags,
        )
        return self._prepare(order, ix, limits, nonce, nonce_authority)

    def _prepare(
        self, order: Order, ix: bool, limits: LimitArgs, nonce: str | None, nonce_authority: Keypair | str | Path | None
    ) -> PreparedTransaction:
        from yieldcli.client.writes import Limits, prepare_write

        return prepare_write(
            self._api,
            self._chain(),
            order,
            ix=ix,
            limits=Limits(**limits),
            nonce=nonce,
            nonce_authority=nonce_authority,
        )


class AsyncClientWrites:
    """`AsyncClient`'s writes, awaited."""

    _api: AsyncServiceClient
    _reads: ReadDefaults
    _writes: WriteSettings

    def _chain(self) -> ChainSettings:
        return self._writes.settings(self._api.base_url)

    async def deposit(
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
    ) -> AsyncPreparedTransaction:
        return await self._move(
            "deposit",
            asset,
            amount,
            raw,
            all,
            strategy,
            wallet,
            payer,
            token_account,
            {},
            ix,
            limits,
            nonce,
            nonce_authority,
        )

    async def withdraw(
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
    ) -> AsyncPreparedTransaction:
        flags = {"exclude_fees": exclude_fees, "unwrap_wsol": unwrap_wsol}
        return await self._move(
            "withdraw",
            asset,
            amount,
            raw,
            all,
            strategy,
            wallet,
            payer,
            token_account,
            flags,
            ix,
            limits,
            nonce,
            nonce_authority,
        )

    async def close_account(
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
    ) -> AsyncPreparedTransaction:
        from yieldcli.client.writes import close_order

        settings = self._chain()
        order = close_order(
            settings,
            self._reads.strategy_id(strategy),
            asset,
            wallet=wallet,
            payer=payer,
            recipient=recipient,
            token_account=token_account,
        )
        return await self._prepare(order, ix, limits, nonce, nonce_authority)

    async def _move(
        self,
        action: str,
        asset: str,
        amount: Decimal | str | None,
        raw: int | None,
        everything: bool,
        strategy: str | None,
        wallet: str | None,
        payer: str | None,
        token_account: str | None,
        flags: dict[str, Any],
        ix: bool,
        limits: LimitArgs,
        nonce: str | None,
        nonce_authority: Keypair | str | Path | None,
    ) -> AsyncPreparedTransaction:
        from yieldcli import tokens
        from yieldcli.client import orders
        from yieldcli.client.writes import decimals_of_mint_async, identity, move_order

        settings = self._chain()
        mint = tokens.resolve_asset(asset, "asset")
        # An unknown mint's decimals (from the chain), read here: the order is built without awaiting.
        decimals = None
        if amount is not None and orders.known_decimals(mint) is None:
            owner = identity(settings, wallet, payer)[0]
            decimals = await decimals_of_mint_async(
                mint, settings.rpc_url, settings.timeout, lambda: self._service_decimals(owner, mint)
            )
        order = move_order(
            settings,
            action,
            self._reads.strategy_id(strategy),
            asset,
            amount,
            raw,
            everything,
            lambda _mint, _owner: decimals,
            wallet=wallet,
            payer=payer,
            token_account=token_account,
            **flags,
        )
        return await self._prepare(order, ix, limits, nonce, nonce_authority)

    async def _service_decimals(self, owner: str, mint: str) -> int | None:
        from yieldcli.client.orders import decimals_in_balances

        return decimals_in_balances(await self._api.balances(owner, asset=mint), mint)

    async def _prepare(
        self, order: Order, ix: bool, limits: LimitArgs, nonce: str | None, nonce_authority: Keypair | str | Path | None
    ) -> AsyncPreparedTransaction:
        from yieldcli.client.writes import Limits, prepare_write_async

        return await prepare_write_async(
            self._api,
            self._chain(),
            order,
            ix=ix,
            limits=Limits(**limits),
            nonce=nonce,
            nonce_authority=nonce_authority,
        )
