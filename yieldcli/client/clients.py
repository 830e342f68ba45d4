"""The service from Python: `Client` (blocking) and `AsyncClient` (asyncio), one typed method per read.

    from yieldcli import Client

    with Client(api_url="https://api.breeze.baby", api_key="...") as client:
        for position in client.iter_positions(wallet, strategy=strategy_id):
            print(position.token_symbol, position.total_position_value_decimal)

Both clients send the same requests, retry the same way and raise the same errors
(`yieldcli.errors`, each with a `kind`): they share `yieldcli.api.core`. `Client` runs on the
standard library (fast to start), `AsyncClient` on httpx2. Importing this module loads neither:
a client's transport is imported when the client is created. Here: construction and the reads, side
by side, one pair per row of the endpoint table (`yieldcli.api.endpoints`); the writes are inherited
from `yieldcli.client.write_methods`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from yieldcli.api import models
from yieldcli.api.endpoints import Endpoints
from yieldcli.api.limits import DEFAULT_CONCURRENCY
from yieldcli.api.pagination import every_item, every_item_async, listing, typed_page
from yieldcli.client.profile import Profile, load_profile, profile_arguments
from yieldcli.client.shared import DEFAULT_TIMEOUT, ReadDefaults, WriteSettings, health_text, public_service_url
from yieldcli.client.shared import read_query as _query  # the name the iter_* bodies use
from yieldcli.client.write_methods import AsyncClientWrites, ClientWrites

if TYPE_CHECKING:
    from pathlib import Path

    from solders.keypair import Keypair

    from yieldcli.api.aio import AsyncServiceClient
    from yieldcli.api.core import JSON
    from yieldcli.api.sync import ServiceClient
    from yieldcli.chain.keys.sign import Signer

__all__ = ["AsyncClient", "Client", "Profile", "load_profile"]  # the profile's names: published here first

T = TypeVar("T")


class Client(ClientWrites):
    """The service, blocking. Thread-safe: `iter_*` keep pages in flight from the calling thread.

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
        strategy_program: str | None = None,
        trust_file: str | Path | None = None,
    ):
        """`api_url`: the service's base URL (None: the public service); `strategy`: the default for
        the reads that need one; `concurrency`: pages in flight at once in `iter_*`; `rpc_url`: the
        Solana JSON-RPC; `keypair`: a solders Keypair, a keypair file, a Ledger keypair URL
        (`usb://ledger?key=0`) or a `LedgerSigner`; `journal_path`: where sent
        signatures are kept until settled (default: the one `yield` uses); `strategy_program`: the
        strategy's program off mainnet (as the `strategy_program` setting; a write's own wins);
        `trust_file`: the destinations trusted for plain transfers on deposits (default: the one
        `yield config trust` writes)."""
        from yieldcli.api.sync import ServiceClient

        self._api: ServiceClient = ServiceClient(
            api_url or public_service_url(), api_key, timeout=timeout, max_connections=max(concurrency, 1)
        )
        self._reads = ReadDefaults(strategy, concurrency)
        self._writes = WriteSettings(rpc_url, keypair, journal_path, timeout, strategy_program, trust_file)

    @classmethod
    def from_profile(cls, name: str | None = None, **overrides: Any) -> Client:
        """A client configured as `yield --profile NAME` would be (None: YIELD_PROFILE or `default`)."""
        return cls(**profile_arguments(name, overrides))

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
        return health_text(self._api.health())

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
        return self._every("positions", (wallet, strategy_id), query, models.position, limit)

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
        return self._every("balances", (wallet,), _query(asset, sort_by, order), models.balance, limit)

    def earnings(
        self, wallet: str, *, fund: str | None = None, page: int | None = None, limit: int | None = None
    ) -> models.Page[models.YieldRecord]:
        body = self._api.earnings(wallet, fund_id=fund, page=page, limit=limit)
        return typed_page("earnings", body, models.yield_record)

    def iter_earnings(
        self, wallet: str, *, fund: str | None = None, limit: int | None = None
    ) -> Iterator[models.YieldRecord]:
        return self._every("earnings", (wallet,), {"fund_id": fund}, models.yield_record, limit)

    def _every(
        self,
        kind: str,
        arguments: tuple[Any, ...],
        query: dict[str, Any],
        parse_item: Callable[[dict[str, Any], int], T],
        limit: int | None,
    ) -> Iterator[T]:
        """Every item of the listing `kind` (a row of the endpoint table), pages fetched concurrently."""
        fetch, fetch_pages = listing(self._api, getattr(Endpoints, kind), arguments, query)
        return every_item(
            kind, fetch, parse_item, limit=limit, concurrency=self._reads.concurrency, fetch_pages=fetch_pages
        )


class AsyncClient(AsyncClientWrites):
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
        strategy_program: str | None = None,
        trust_file: str | Path | None = None,
    ):
        from yieldcli.api.aio import AsyncServiceClient

        self._api: AsyncServiceClient = AsyncServiceClient(
            api_url or public_service_url(), api_key, timeout=timeout, max_connections=max(concurrency, 1)
        )
        self._reads = ReadDefaults(strategy, concurrency)
        self._writes = WriteSettings(rpc_url, keypair, journal_path, timeout, strategy_program, trust_file)

    @classmethod
    def from_profile(cls, name: str | None = None, **overrides: Any) -> AsyncClient:
        return cls(**profile_arguments(name, overrides))

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
        return health_text(await self._api.health())

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
