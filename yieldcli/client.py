"""The service from Python: `Client` (blocking) and `AsyncClient` (asyncio), one typed method per read.

    from yieldcli import Client

    with Client(api_url="https://api.breeze.baby", api_key="...") as client:
        for position in client.iter_positions(wallet, strategy=strategy_id):
            print(position.token_symbol, position.total_position_value_decimal)

Both clients send the same requests, retry the same way and raise the same errors
(`yieldcli.errors`, each with a `kind`): they share `yieldcli.api.core`. `Client` runs on the
standard library (fast to start), `AsyncClient` on httpx2. Importing this module loads neither:
a client's transport is imported when the client is created.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from yieldcli.api import models
from yieldcli.api.pagination import DEFAULT_CONCURRENCY, every_item, every_item_async, typed_page
from yieldcli.errors import UsageError

if TYPE_CHECKING:
    from decimal import Decimal
    from pathlib import Path
    from typing import Unpack

    from solders.keypair import Keypair
    from solders.transaction import VersionedTransaction

    from yieldcli.api.aio import AsyncServiceClient
    from yieldcli.api.core import JSON
    from yieldcli.api.sync import ServiceClient
    from yieldcli.chain.sign import Signer
    from yieldcli.client_writes import AsyncPreparedTransaction, ChainSettings, LimitArgs, PreparedTransaction

DEFAULT_TIMEOUT = 30.0


class Profile:
    """Where a client's settings came from: the command line's resolution, read-only."""

    def __init__(
        self,
        name: str,
        api_url: str,
        api_key: str | None,
        timeout: float,
        strategy: str | None,
        rpc_url: str | None = None,
        keypair: str | None = None,
    ):
        self.rpc_url = rpc_url
        self.keypair = keypair  # a keypair file's path
        self.name = name
        self.api_url = api_url
        self.api_key = api_key
        self.timeout = timeout
        self.strategy = strategy

    def __repr__(self) -> str:  # the key stays out of reprs and tracebacks
        return f"Profile(name={self.name!r}, api_url={self.api_url!r}, strategy={self.strategy!r})"


def load_profile(name: str | None = None) -> Profile:
    """Settings as `yield` resolves them: environment > profile in the config file > default, and the
    API key from YIELD_API_KEY or the keyring."""
    from pathlib import Path

    from yieldcli import config
    from yieldcli.environment import Environment
    from yieldcli.errors import ConfigError
    from yieldcli.secrets import find_api_key

    env = Environment()
    profile = config.resolve_profile(name, env)
    file = config.ConfigFile.load(Path(config.resolve_config_path(None, env).value))
    config.check_profile(file, profile)
    settings = config.Settings(env, file, profile)
    timeout_text = str(settings.value("timeout"))
    try:
        timeout = float(timeout_text)
    except ValueError:
        raise ConfigError(f"invalid timeout {timeout_text!r}: expected a number of seconds") from None
    found, _ = find_api_key(env, profile.value)
    strategy, rpc_url, keypair = (settings.value(key) for key in ("strategy", "rpc_url", "keypair"))
    return Profile(
        str(profile.value),
        str(settings.value("api_url")),
        found.value if found else None,
        timeout,
        str(strategy) if strategy else None,
        str(rpc_url) if rpc_url else None,
        str(keypair) if keypair else None,
    )


class _Reads:
    """What both clients share above the wire: defaults, queries and parsing."""

    def __init__(self, strategy: str | None, concurrency: int):
        self.strategy = strategy
        self.concurrency = concurrency

    def strategy_id(self, given: str | None) -> str:
        if given:
            return given
        if self.strategy:
            return self.strategy
        raise UsageError("no strategy: pass strategy=, or create the client with a default strategy")


class _Writes:
    """Where and as whom both clients sign and send: resolved at the first write (reads never load solders)."""

    def __init__(
        self,
        rpc_url: str | None,
        keypair: Signer | Keypair | str | Path | None,
        journal_path: str | Path | None,
        timeout: float,
    ):
        self._given = (rpc_url, keypair, journal_path, timeout)
        self._settings: ChainSettings | None = None

    def settings(self, api_url: str) -> ChainSettings:
        if self._settings is None:
            from yieldcli.client_writes import chain_settings

            rpc_url, keypair, journal_path, timeout = self._given
            if not rpc_url:
                raise UsageError("no Solana RPC: create the client with rpc_url=", kind="usage.no_rpc")
            self._settings = chain_settings(api_url, rpc_url, keypair, journal_path, timeout)
        return self._settings


def _public_service_url() -> str:
    from yieldcli.config import DEFAULT_API_URL

    return DEFAULT_API_URL


def _query(
    asset: str | None = None, sort_by: str | None = None, order: str | None = None, **more: str | int | None
) -> dict[str, str | int | None]:
    if order is not None and order not in ("asc", "desc"):
        raise UsageError(f"invalid order {order!r}: expected 'asc' or 'desc'")
    return {"asset": asset, "sort_by": sort_by, "sort_order": order, **more}


def _health(body: JSON) -> str:
    if not isinstance(body, str):
        raise models.BodyError(f"the service answered the health check with {type(body).__name__}, not text")
    return body


class Client:
    """The service, blocking. Thread-safe: `iter_*` fetch pages on a bounded pool of threads.

    Writes (`deposit`, `withdraw`, `close_account`) need `rpc_url` and `keypair`; they return a
    `PreparedTransaction` to look at (`.effect.summary`) before `.send(confirm=...)`.
    """

    def __init__(
        self,
        api_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        strategy: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        rpc_url: str | None = None,
        keypair: Signer | Keypair | str | Path | None = None,
        journal_path: str | Path | None = None,
    ):
        """`api_url`: the service's base URL (None: the public service); `strategy`: the default for
        the reads that need one; `concurrency`: pages in flight at once in `iter_*`; `rpc_url`: the
        Solana JSON-RPC; `keypair`: a solders Keypair, a keypair file, a Ledger keypair URL
        (`usb://ledger?key=0`) or a `LedgerSigner`; `journal_path`: where sent
        signatures are kept until settled (default: the one `yield` uses)."""
        from yieldcli.api.sync import ServiceClient

        self._api: ServiceClient = ServiceClient(
            api_url or _public_service_url(), api_key, timeout=timeout, max_connections=max(concurrency, 1)
        )
        self._reads = _Reads(strategy, concurrency)
        self._writes = _Writes(rpc_url, keypair, journal_path, timeout)

    @classmethod
    def from_profile(cls, name: str | None = None, **overrides: Any) -> Client:
        """A client configured as `yield --profile NAME` would be (None: YIELD_PROFILE or `default`)."""
        return cls(**_profile_arguments(name, overrides))

    @property
    def api_url(self) -> str:
        return self._api.base_url

    def close(self) -> None:
        self._api.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def health(self) -> str:
        """The service's health answer ("OK")."""
        return _health(self._api.health())

    def strategy(self, strategy_id: str | None = None) -> models.Strategy:
        return models.strategy(self._api.strategy_info(self._reads.strategy_id(strategy_id)))

    def positions(
        self,
        wallet: str,
        strategy: str | None = None,
        *,
        asset: str | None = None,
        sort_by: str | None = None,
        order: str | None = None,
        page: int | None = None,
        limit: int | None = None,
    ) -> models.Page[models.Position]:
        body = self._api.positions(
            wallet, self._reads.strategy_id(strategy), **_query(asset, sort_by, order, page=page, limit=limit)
        )
        return typed_page("positions", body, models.position)

    def iter_positions(
        self,
        wallet: str,
        strategy: str | None = None,
        *,
        asset: str | None = None,
        sort_by: str | None = None,
        order: str | None = None,
        limit: int | None = None,
    ) -> Iterator[models.Position]:
        """Every position on every page; pages are fetched concurrently and yielded in order."""
        strategy_id, query = self._reads.strategy_id(strategy), _query(asset, sort_by, order)

        def fetch(page: int | None, size: int | None) -> JSON:
            return self._api.positions(wallet, strategy_id, **query, page=page, limit=size)

        return every_item("positions", fetch, models.position, limit=limit, concurrency=self._reads.concurrency)

    def balances(
        self,
        wallet: str,
        *,
        asset: str | None = None,
        sort_by: str | None = None,
        order: str | None = None,
        page: int | None = None,
        limit: int | None = None,
    ) -> models.Page[models.Balance]:
        body = self._api.balances(wallet, **_query(asset, sort_by, order, page=page, limit=limit))
        return typed_page("balances", body, models.balance)

    def iter_balances(
        self,
        wallet: str,
        *,
        asset: str | None = None,
        sort_by: str | None = None,
        order: str | None = None,
        limit: int | None = None,
    ) -> Iterator[models.Balance]:
        query = _query(asset, sort_by, order)

        def fetch(page: int | None, size: int | None) -> JSON:
            return self._api.balances(wallet, **query, page=page, limit=size)

        return every_item("balances", fetch, models.balance, limit=limit, concurrency=self._reads.concurrency)

    def earnings(
        self, wallet: str, *, fund: str | None = None, page: int | None = None, limit: int | None = None
    ) -> models.Page[models.YieldRecord]:
        body = self._api.earnings(wallet, fund_id=fund, page=page, limit=limit)
        return typed_page("earnings", body, models.yield_record)

    def iter_earnings(
        self, wallet: str, *, fund: str | None = None, limit: int | None = None
    ) -> Iterator[models.YieldRecord]:
        def fetch(page: int | None, size: int | None) -> JSON:
            return self._api.earnings(wallet, fund_id=fund, page=page, limit=size)

        return every_item("earnings", fetch, models.yield_record, limit=limit, concurrency=self._reads.concurrency)

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
        from yieldcli.client_writes import Limits, move_order, prepare_write

        order = move_order(
            self._writes.settings(self.api_url),
            "deposit",
            self._reads.strategy_id(strategy),
            asset,
            amount,
            raw,
            all,
            self._decimals_of_unknown,
            wallet=wallet,
            payer=payer,
            token_account=token_account,
        )
        return prepare_write(
            self._api,
            self._writes.settings(self.api_url),
            order,
            ix=ix,
            limits=Limits(**limits),
            nonce=nonce,
            nonce_authority=nonce_authority,
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
        from yieldcli.client_writes import Limits, move_order, prepare_write

        order = move_order(
            self._writes.settings(self.api_url),
            "withdraw",
            self._reads.strategy_id(strategy),
            asset,
            amount,
            raw,
            all,
            self._decimals_of_unknown,
            wallet=wallet,
            payer=payer,
            token_account=token_account,
            exclude_fees=exclude_fees,
            unwrap_wsol=unwrap_wsol,
        )
        return prepare_write(
            self._api,
            self._writes.settings(self.api_url),
            order,
            ix=ix,
            limits=Limits(**limits),
            nonce=nonce,
            nonce_authority=nonce_authority,
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
        **limits: Unpack[LimitArgs],
    ) -> PreparedTransaction:
        """A transaction built elsewhere (base64 text, bytes, or a VersionedTransaction), reviewed,
        simulated and checked against what it is said to do, then `.sign()`ed or `.send()`ed as
        `yield tx sign/send --expect ACTION:ASSET[:AMOUNT]` does: `action` "deposit" or "withdraw" of
        `amount` (`raw=`, `all=True`) of `asset`, "close-account" of `asset`, or "transaction" (no
        claim: signing may then cost only the network fee and rent). `payer`: the fee payer expected
        (default: the keypair); `wallet`: another signer expected to sign later."""
        from yieldcli.client_writes import Limits, given_order, prepare_given

        settings = self._writes.settings(self.api_url)
        request, obtain = given_order(
            settings, transaction, action, asset, amount, raw, all, payer=payer, wallet=wallet
        )
        return prepare_given(settings, request, obtain, Limits(**limits))

    def _decimals_of_unknown(self, mint: str, owner: str) -> int | None:
        from yieldcli.client_writes import decimals_of_mint
        from yieldcli.orders import decimals_in_balances

        settings = self._writes.settings(self.api_url)
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
        from yieldcli.client_writes import Limits, close_order, prepare_write

        order = close_order(
            self._writes.settings(self.api_url),
            self._reads.strategy_id(strategy),
            asset,
            wallet=wallet,
            payer=payer,
            recipient=recipient,
            token_account=token_account,
        )
        return prepare_write(
            self._api,
            self._writes.settings(self.api_url),
            order,
            ix=ix,
            limits=Limits(**limits),
            nonce=nonce,
            nonce_authority=nonce_authority,
        )


class AsyncClient:
    """The service, for asyncio. Same methods as `Client`, awaited; `iter_*` are async iterators."""

    def __init__(
        self,
        api_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        strategy: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        rpc_url: str | None = None,
        keypair: Signer | Keypair | str | Path | None = None,
        journal_path: str | Path | None = None,
    ):
        from yieldcli.api.aio import AsyncServiceClient

        self._api: AsyncServiceClient = AsyncServiceClient(
            api_url or _public_service_url(), api_key, timeout=timeout, max_connections=max(concurrency, 1)
        )
        self._reads = _Reads(strategy, concurrency)
        self._writes = _Writes(rpc_url, keypair, journal_path, timeout)

    @classmethod
    def from_profile(cls, name: str | None = None, **overrides: Any) -> AsyncClient:
        return cls(**_profile_arguments(name, overrides))

    @property
    def api_url(self) -> str:
        return self._api.base_url

    async def aclose(self) -> None:
        await self._api.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def health(self) -> str:
        return _health(await self._api.health())

    async def strategy(self, strategy_id: str | None = None) -> models.Strategy:
        return models.strategy(await self._api.strategy_info(self._reads.strategy_id(strategy_id)))

    async def positions(
        self,
        wallet: str,
        strategy: str | None = None,
        *,
        asset: str | None = None,
        sort_by: str | None = None,
        order: str | None = None,
        page: int | None = None,
        limit: int | None = None,
    ) -> models.Page[models.Position]:
        body = await self._api.positions(
            wallet, self._reads.strategy_id(strategy), **_query(asset, sort_by, order, page=page, limit=limit)
        )
        return typed_page("positions", body, models.position)

    def iter_positions(
        self,
        wallet: str,
        strategy: str | None = None,
        *,
        asset: str | None = None,
        sort_by: str | None = None,
        order: str | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[models.Position]:
        strategy_id, query = self._reads.strategy_id(strategy), _query(asset, sort_by, order)

        async def fetch(page: int | None, size: int | None) -> JSON:
            return await self._api.positions(wallet, strategy_id, **query, page=page, limit=size)

        return every_item_async("positions", fetch, models.position, limit=limit, concurrency=self._reads.concurrency)

    async def balances(
        self,
        wallet: str,
        *,
        asset: str | None = None,
        sort_by: str | None = None,
        order: str | None = None,
        page: int | None = None,
        limit: int | None = None,
    ) -> models.Page[models.Balance]:
        body = await self._api.balances(wallet, **_query(asset, sort_by, order, page=page, limit=limit))
        return typed_page("balances", body, models.balance)

    def iter_balances(
        self,
        wallet: str,
        *,
        asset: str | None = None,
        sort_by: str | None = None,
        order: str | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[models.Balance]:
        query = _query(asset, sort_by, order)

        async def fetch(page: int | None, size: int | None) -> JSON:
            return await self._api.balances(wallet, **query, page=page, limit=size)

        return every_item_async("balances", fetch, models.balance, limit=limit, concurrency=self._reads.concurrency)

    async def earnings(
        self, wallet: str, *, fund: str | None = None, page: int | None = None, limit: int | None = None
    ) -> models.Page[models.YieldRecord]:
        body = await self._api.earnings(wallet, fund_id=fund, page=page, limit=limit)
        return typed_page("earnings", body, models.yield_record)

    def iter_earnings(
        self, wallet: str, *, fund: str | None = None, limit: int | None = None
    ) -> AsyncIterator[models.YieldRecord]:
        async def fetch(page: int | None, size: int | None) -> JSON:
            return await self._api.earnings(wallet, fund_id=fund, page=page, limit=size)

        return every_item_async(
            "earnings", fetch, models.yield_record, limit=limit, concurrency=self._reads.concurrency
        )

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
        from yieldcli.client_writes import Limits, close_order, prepare_write_async

        settings = self._writes.settings(self.api_url)
        order = close_order(
            settings,
            self._reads.strategy_id(strategy),
            asset,
            wallet=wallet,
            payer=payer,
            recipient=recipient,
            token_account=token_account,
        )
        return await prepare_write_async(
            self._api, settings, order, ix=ix, limits=Limits(**limits), nonce=nonce, nonce_authority=nonce_authority
        )

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
        from yieldcli import orders, tokens
        from yieldcli.client_writes import Limits, decimals_of_mint_async, identity, move_order, prepare_write_async

        settings = self._writes.settings(self.api_url)
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
        return await prepare_write_async(
            self._api, settings, order, ix=ix, limits=Limits(**limits), nonce=nonce, nonce_authority=nonce_authority
        )

    async def _service_decimals(self, owner: str, mint: str) -> int | None:
        from yieldcli.orders import decimals_in_balances

        return decimals_in_balances(await self._api.balances(owner, asset=mint), mint)


def _profile_arguments(name: str | None, overrides: dict[str, Any]) -> dict[str, Any]:
    """The constructor arguments a profile gives (as `yield --profile NAME` resolves them), overrides winning."""
    profile = load_profile(name)
    return {
        "api_url": profile.api_url,
        "api_key": profile.api_key,
        "timeout": profile.timeout,
        "strategy": profile.strategy,
        "rpc_url": profile.rpc_url,
        "keypair": profile.keypair,
        **overrides,
    }
