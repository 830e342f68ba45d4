"""The service from Python: `Client` (blocking) and `AsyncClient` (asyncio), one typed method per read.

    from yieldcli import Client

    with Client(api_url="https://api.breeze.baby", api_key="...") as client:
        for position in client.iter_positions(wallet, strategy=strategy_id):
            print(position.token_symbol, position.total_position_value_decimal)

Both clients send the same requests, retry the same way and raise the same errors
(`yieldcli.errors`, each with a `kind`): they share `yieldcli.api.core`. `Client` runs on the
standard library (fast to start), `AsyncClient` on httpx2, either on a transport the caller gives
(`transport=`: `yieldcli.api.seam`; `yieldcli.testing.MockTransport` for tests). Importing this
module loads none of them: a client's transport is imported when the client is created. Here:
construction, and the reads, each written once for both clients (`yieldcli.client.reads`: a read is
the request it asks, which each client answers its own way); the writes are inherited from
`yieldcli.client.write_methods`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from yieldcli.api import models
from yieldcli.api.closing import AsyncCloses, Closes
from yieldcli.api.endpoints import Endpoints
from yieldcli.api.limits import DEFAULT_CONCURRENCY
from yieldcli.client.chain_methods import AsyncClientChain, ClientChain
from yieldcli.client.profile import Profile, load_profile, profile_arguments
from yieldcli.client.reads import Ask, AsyncReads, Listing, Read, SyncReads, page_of
from yieldcli.client.shared import DEFAULT_TIMEOUT, ReadDefaults, WriteSettings, health_text, public_service_url
from yieldcli.client.shared import read_query as _query
from yieldcli.client.write_methods import AsyncClientWrites, ClientWrites

if TYPE_CHECKING:
    from pathlib import Path

    from solders.keypair import Keypair

    from yieldcli.api.aio import AsyncServiceClient
    from yieldcli.api.seam import AsyncTransport, Transport
    from yieldcli.api.sync import ServiceClient
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.client.prepared import ChainSettings

__all__ = ["AsyncClient", "Client", "Profile", "load_profile"]  # the profile's names: published here first

C = TypeVar("C", bound="_Construction")


# --- the reads: what each asks (sans I/O), one function a read; `Reads` makes them methods ----------


def _health(defaults: ReadDefaults) -> Ask:
    """The service's health answer ("OK")."""
    return Ask(Endpoints.health)


def _strategy(defaults: ReadDefaults, strategy_id: str | None = None) -> Ask:
    """The strategy: name, assets and variable APY (None: the client's default strategy)."""
    return Ask(Endpoints.strategy_info, (defaults.strategy_id(strategy_id),))


def _positions(
    defaults: ReadDefaults,
    wallet: str,
    strategy: str | None = None,
    *,
    asset: str | None = None,
    sort_by: str | None = None,
    order: str | None = None,
    page: int | None = None,
    limit: int | None = None,
) -> Ask:
    """One page of the wallet's positions in the strategy."""
    query = _query(asset, sort_by, order, page=page, limit=limit)
    return Ask(Endpoints.positions, (wallet, defaults.strategy_id(strategy)), query)


def _iter_positions(
    defaults: ReadDefaults,
    wallet: str,
    strategy: str | None = None,
    *,
    asset: str | None = None,
    sort_by: str | None = None,
    order: str | None = None,
    limit: int | None = None,
) -> Ask:
    """Every position on every page; pages are fetched concurrently and yielded in order."""
    return _positions(defaults, wallet, strategy, asset=asset, sort_by=sort_by, order=order, limit=limit)


def _balances(
    defaults: ReadDefaults,
    wallet: str,
    *,
    asset: str | None = None,
    sort_by: str | None = None,
    order: str | None = None,
    page: int | None = None,
    limit: int | None = None,
) -> Ask:
    """One page of the wallet's token balances."""
    return Ask(Endpoints.balances, (wallet,), _query(asset, sort_by, order, page=page, limit=limit))


def _iter_balances(
    defaults: ReadDefaults,
    wallet: str,
    *,
    asset: str | None = None,
    sort_by: str | None = None,
    order: str | None = None,
    limit: int | None = None,
) -> Ask:
    """Every balance on every page; pages are fetched concurrently and yielded in order."""
    return _balances(defaults, wallet, asset=asset, sort_by=sort_by, order=order, limit=limit)


def _earnings(
    defaults: ReadDefaults, wallet: str, *, fund: str | None = None, page: int | None = None, limit: int | None = None
) -> Ask:
    """One page of the wallet's yield records, per fund."""
    return Ask(Endpoints.earnings, (wallet,), {"fund_id": fund, "page": page, "limit": limit})


def _iter_earnings(defaults: ReadDefaults, wallet: str, *, fund: str | None = None, limit: int | None = None) -> Ask:
    """Every yield record on every page; pages are fetched concurrently and yielded in order."""
    return _earnings(defaults, wallet, fund=fund, limit=limit)


class Reads:
    """Every read, once: a method of `Client` (blocking) and of `AsyncClient` (awaited; `iter_*` async
    iterators). A new read endpoint is a line here (and its row in `yieldcli.api.endpoints`)."""

    health = Read(_health, health_text)
    strategy = Read(_strategy, models.strategy)
    positions = Read(_positions, page_of("positions", models.position))
    iter_positions = Listing("positions", _iter_positions, models.position)
    balances = Read(_balances, page_of("balances", models.balance))
    iter_balances = Listing("balances", _iter_balances, models.balance)
    earnings = Read(_earnings, page_of("earnings", models.yield_record))
    iter_earnings = Listing("earnings", _iter_earnings, models.yield_record)


class _Construction:
    """What both clients are made of: the service client, the read defaults, the write settings."""

    _api: Any

    def __init__(
        self,
        api_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        strategy: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        transport: Transport | AsyncTransport | None = None,
        rpc_url: str | None = None,
        keypair: Signer | Keypair | str | Path | None = None,
        journal_path: str | Path | None = None,
        strategy_program: str | None = None,
        trust_file: str | Path | None = None,
        priority_fee: int | str | None = None,
        max_fee: int | None = None,
    ):
        """`api_url`: the service's base URL (None: the public service); `strategy`: the default for
        the reads that need one; `concurrency`: pages in flight at once in `iter_*`; `transport`:
        what moves the service's bytes instead of the client's own, every request through its
        `handle_request` (`handle_async_request` for `AsyncClient`), as with httpx
        (`yieldcli.testing.MockTransport` answers with a function); `rpc_url`: the
        Solana JSON-RPC; `keypair`: a solders Keypair, a keypair file, a Ledger keypair URL
        (`usb://ledger?key=0`) or a `LedgerSigner`; `journal_path`: where sent
        signatures are kept until settled (default: the one `yield` uses); `strategy_program`: the
        strategy's program off mainnet (as the `strategy_program` setting; a write's own wins);
        `trust_file`: the destinations trusted for plain transfers on deposits (default: the one
        `yield config trust` writes); `priority_fee` ("auto" or micro-lamports per compute unit) and
        `max_fee` (lamports): every write's defaults, as the profile settings of the same names (a
        write's own win; a transaction already signed keeps its fee)."""
        self._api = self._service(api_url or public_service_url(), api_key, timeout, max(concurrency, 1), transport)
        self._reads = ReadDefaults(strategy, concurrency)
        self._writes = WriteSettings(
            rpc_url, keypair, journal_path, timeout, strategy_program, trust_file, priority_fee, max_fee
        )

    @classmethod
    def from_profile(
        cls: type[C],
        name: str | None = None,
        *,
        api_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        strategy: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        transport: Transport | AsyncTransport | None = None,
        rpc_url: str | None = None,
        keypair: Signer | Keypair | str | Path | None = None,
        journal_path: str | Path | None = None,
        strategy_program: str | None = None,
        trust_file: str | Path | None = None,
        priority_fee: int | str | None = None,
        max_fee: int | None = None,
    ) -> C:
        """A client configured as `yield --profile NAME` would be (None: YIELD_PROFILE or `default`), each
        keyword given (not None) overriding the profile's setting. No API key found is a `ConfigError` here,
        not at the first request."""
        given: dict[str, Any] = {"api_url": api_url, "api_key": api_key, "timeout": timeout, "strategy": strategy}
        given.update(rpc_url=rpc_url, keypair=keypair, strategy_program=strategy_program)
        given.update(priority_fee=priority_fee, max_fee=max_fee)
        settings = profile_arguments(name, {key: value for key, value in given.items() if value is not None})
        return cls(
            **settings, concurrency=concurrency, transport=transport, journal_path=journal_path, trust_file=trust_file
        )

    @staticmethod
    def _service(
        url: str, key: str | None, timeout: float, connections: int, transport: Transport | AsyncTransport | None
    ) -> Any:
        raise NotImplementedError  # each client's own service client

    @property
    def api_url(self) -> str:
        return str(self._api.base_url)


# A wrong keyword names the method a caller called, not the base class it is written in.
vars(_Construction)["from_profile"].__func__.__qualname__ = "from_profile"


class Client(_Construction, ClientWrites, ClientChain, SyncReads, Reads, Closes):
    """The service, blocking. Thread-safe: `iter_*` keep pages in flight from the calling thread.

    Writes (`deposit`, `withdraw`, `close_account`) need `rpc_url` and `keypair`; they return a
    `PreparedTransaction` to look at (`.effect.summary`) before `.send(confirm=...)`.
    """

    _api: ServiceClient

    @staticmethod
    def _service(
        url: str, key: str | None, timeout: float, connections: int, transport: Transport | AsyncTransport | None
    ) -> ServiceClient:
        from yieldcli.api.sync import ServiceClient

        return ServiceClient(url, key, timeout=timeout, max_connections=connections, transport=transport)

    @classmethod
    def over(
        cls,
        api: ServiceClient,
        *,
        strategy: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        chain: ChainSettings | None = None,
    ) -> Client:
        """A client over a service client already made (its URL, key, timeout, log and retries: the
        command line's); closing it closes `api`. It writes where and as whom `chain` says (none: it
        only reads)."""
        client = cls.__new__(cls)
        client._api = api
        client._reads = ReadDefaults(strategy, concurrency)
        client._writes = WriteSettings(None, None, None, DEFAULT_TIMEOUT, resolved=chain)
        return client

    def close(self) -> None:
        self._api.close()


class AsyncClient(_Construction, AsyncClientWrites, AsyncClientChain, AsyncReads, Reads, AsyncCloses):
    """The service, for asyncio. Same methods as `Client`, awaited; `iter_*` are async iterators."""

    _api: AsyncServiceClient

    @staticmethod
    def _service(
        url: str, key: str | None, timeout: float, connections: int, transport: Transport | AsyncTransport | None
    ) -> AsyncServiceClient:
        from yieldcli.api.aio import AsyncServiceClient

        return AsyncServiceClient(url, key, timeout=timeout, max_connections=connections, transport=transport)

    async def aclose(self) -> None:
        await self._api.aclose()
