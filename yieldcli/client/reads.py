"""The reads of `Client` and `AsyncClient`, written once for both: a read is a value, not a method body.

A read is a function from the method's arguments (and the client's defaults) to the request it asks
(`Ask`: a row of the endpoint table, its arguments, its query): sans I/O. `Read` and `Listing` turn
such a function into a method of either client. A client is a driver: `SyncReads` answers an `Ask`
by blocking, `AsyncReads` by awaiting, and each pages a listing its own way. So one read is written
once, its typed signature included (the method takes the function's parameters, after the defaults),
and a new read endpoint is one `Read`/`Listing` line in `yieldcli.client.clients`, not two methods.
Not an async client generated from the sync one (unasync): that is a second copy of every read to
keep current, and a file more for every new read; here neither client has a read body to copy.

What only a program drawing whole pages needs (the command line, or any Python caller) is here too:
`SyncReads.page_result` (raw and typed items, the page's meta, every page with progress) and
`SyncReads.each_wallet` (one listing for many wallets at once, failures kept apart).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, overload

from yieldcli.api import models
from yieldcli.api.pagination import collect, every_item, every_item_async, listing, typed_page
from yieldcli.errors import YieldError

if TYPE_CHECKING:
    from typing import Concatenate

    from yieldcli.api.aio import AsyncServiceClient
    from yieldcli.api.core import JSON
    from yieldcli.api.endpoints import Endpoint
    from yieldcli.api.pagination import PageResult, ParseItem, Progress
    from yieldcli.api.sync import ServiceClient
    from yieldcli.client.shared import ReadDefaults

P = ParamSpec("P")
T = TypeVar("T")


class Ask:
    """What a read asks: a row of the endpoint table, its arguments in order, its query by name."""

    __slots__ = ("arguments", "endpoint", "query")

    def __init__(self, endpoint: Endpoint, arguments: tuple[Any, ...] = (), query: Mapping[str, Any] | None = None):
        self.endpoint = endpoint  # an instance's attribute: not bound as the table's rows are
        self.arguments = arguments
        self.query: Mapping[str, Any] = query or {}


class SyncReads:
    """The blocking driver: what `Client` needs to answer a `Read` or a `Listing`."""

    _api: ServiceClient
    _reads: ReadDefaults

    def _answer(self, ask: Ask) -> JSON:
        return self._api.serve(ask.endpoint, *ask.arguments, **ask.query)

    def _items(self, kind: str, ask: Ask, parse_item: ParseItem) -> Iterator[Any]:
        query, size = _pages_of(ask)
        fetch, fetch_pages = listing(self._api, ask.endpoint, ask.arguments, query)
        return every_item(
            kind, fetch, parse_item, limit=size, concurrency=self._reads.concurrency, fetch_pages=fetch_pages
        )

    def answer(self, read: str, /, *arguments: Any, **keywords: Any) -> JSON:
        """The service's answer to the read named `read` (`"strategy"`, `"health"`), as it came: decoded
        JSON, not yet a model (the read's own method parses it)."""
        return self._answer(_read(type(self), read).ask(self._reads, *arguments, **keywords))

    def page_result(
        self,
        kind: str,
        /,
        *arguments: Any,
        page: int | None = None,
        limit: int | None = None,
        every: bool = False,
        concurrency: int | None = None,
        progress: Progress | None = None,
        **query: Any,
    ) -> PageResult:
        """The listing `kind` (`"positions"`...: the method `iter_<kind>`'s arguments) as a `PageResult`:
        each item raw and typed, and the meta of what was read. One page (`page`, `limit`), or with
        `every` every page (`limit` items each), `concurrency` in flight, `progress(done, of)` as they
        come: items stream in order, the meta is known once they are read."""
        return self._result(kind, arguments, query, page, limit, every, concurrency, progress, True)

    def each_wallet(
        self,
        kind: str,
        wallets: list[str],
        /,
        *arguments: Any,
        page: int | None = None,
        limit: int | None = None,
        every: bool = False,
        concurrency: int | None = None,
        progress: Progress | None = None,
        **query: Any,
    ) -> Iterator[tuple[str, PageResult | YieldError]]:
        """`page_result(kind, wallet, *arguments, ...)` for each wallet, `concurrency` wallets at once (a
        page at a time each), in the wallets' order; a wallet that fails gives its error, the others
        still complete. `progress(wallets done, of)` as each ends."""
        from yieldcli.wallets import in_order

        done = [0]

        def one_wallet(wallet: str) -> PageResult:
            try:
                result = self._result(kind, (wallet, *arguments), query, page, limit, every, 1, None, False)
                result.entries = list(result.entries)  # fetched in the worker, written in order by the caller
                return result
            finally:
                done[0] += 1
                if progress:
                    progress(done[0], len(wallets))

        return in_order(wallets, one_wallet, concurrency or self._reads.concurrency)

    def _result(
        self,
        kind: str,
        arguments: tuple[Any, ...],
        query: dict[str, Any],
        page: int | None,
        limit: int | None,
        every: bool,
        concurrency: int | None,
        progress: Progress | None,
        many_at_once: bool,
    ) -> PageResult:
        iterator = _listing(type(self), kind)
        ask = iterator.ask(self._reads, *arguments, **query)
        fetch, fetch_pages = listing(self._api, ask.endpoint, ask.arguments, _pages_of(ask)[0])
        return collect(
            kind,
            fetch,
            iterator.parse_item,
            page=page,
            limit=limit,
            fetch_all=every,
            concurrency=concurrency or self._reads.concurrency,
            progress=progress,
            fetch_pages=fetch_pages if many_at_once else None,  # one wallet of many: a page at a time
        )


class AsyncReads:
    """The asyncio driver: what `AsyncClient` needs to answer a `Read` or a `Listing`."""

    _api: AsyncServiceClient
    _reads: ReadDefaults

    async def _answer(self, ask: Ask) -> JSON:
        return await self._api.serve(ask.endpoint, *ask.arguments, **ask.query)

    def _items(self, kind: str, ask: Ask, parse_item: ParseItem) -> AsyncIterator[Any]:
        query, size = _pages_of(ask)
        endpoint, arguments, api = ask.endpoint, ask.arguments, self._api

        async def fetch(page: int | None, size: int | None) -> JSON:
            return await api.serve(endpoint, *arguments, **query, page=page, limit=size)

        return every_item_async(kind, fetch, parse_item, limit=size, concurrency=self._reads.concurrency)


class Read(Generic[P, T]):
    """One read answered in one request: `ask` makes the request, `parse` the answer's model."""

    def __init__(self, ask: Callable[Concatenate[ReadDefaults, P], Ask], parse: Callable[[JSON], T]):
        self.ask, self.parse = ask, parse
        self.__doc__ = ask.__doc__

    @overload
    def __get__(self, client: None, owner: type) -> Read[P, T]: ...
    @overload
    def __get__(self, client: SyncReads, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, client: AsyncReads, owner: type) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, client: SyncReads | AsyncReads | None, owner: type) -> Any:
        if client is None:
            return self
        ask, parse, defaults = self.ask, self.parse, client._reads
        if isinstance(client, AsyncReads):
            answer_async = client._answer

            async def read_async(*arguments: Any, **keywords: Any) -> T:
                return parse(await answer_async(ask(defaults, *arguments, **keywords)))

            return _named(read_async, ask, defaults)
        answer = client._answer

        def read(*arguments: Any, **keywords: Any) -> T:
            return parse(answer(ask(defaults, *arguments, **keywords)))

        return _named(read, ask, defaults)


class Listing(Generic[P, T]):
    """Every item of a paginated read (`iter_*`): `ask` makes the request of its pages (its `limit`,
    the page size), `parse_item` each item's model; pages are fetched concurrently, items come in order."""

    def __init__(self, kind: str, ask: Callable[Concatenate[ReadDefaults, P], Ask], parse_item: Callable[..., T]):
        self.kind, self.ask, self.parse_item = kind, ask, parse_item
        self.__doc__ = ask.__doc__

    @overload
    def __get__(self, client: None, owner: type) -> Listing[P, T]: ...
    @overload
    def __get__(self, client: SyncReads, owner: type) -> Callable[P, Iterator[T]]: ...
    @overload
    def __get__(self, client: AsyncReads, owner: type) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, client: SyncReads | AsyncReads | None, owner: type) -> Any:
        if client is None:
            return self
        kind, ask, parse_item, defaults, items = self.kind, self.ask, self.parse_item, client._reads, client._items

        def every(*arguments: Any, **keywords: Any) -> Any:
            return items(kind, ask(defaults, *arguments, **keywords), parse_item)

        return _named(every, ask, defaults)


def page_of(kind: str, parse_item: Callable[[dict[str, Any], int], T]) -> Callable[[JSON], models.Page[T]]:
    """The parse of one page of a listing: typed items and the service's meta."""

    def parse(body: JSON) -> models.Page[T]:
        return typed_page(kind, body, parse_item)

    return parse


def _named(method: Callable[..., Any], ask: Callable[..., Any], defaults: ReadDefaults) -> Callable[..., Any]:
    """The bound read, named, documented and signed as its ask without the defaults (help(),
    inspect.signature, tracebacks)."""
    method.__name__ = method.__qualname__ = ask.__name__.lstrip("_")
    method.__doc__ = ask.__doc__
    method.__wrapped__ = partial(ask, defaults)  # type: ignore[attr-defined]  # what inspect.signature reads
    return method


def _pages_of(ask: Ask) -> tuple[dict[str, Any], int | None]:
    """A listing's query without its paging, and its page size (`limit`): the pager adds both."""
    query = {name: value for name, value in ask.query.items() if name not in ("page", "limit")}
    return query, ask.query.get("limit")


def _read(client: type, name: str) -> Read[..., Any]:
    found = getattr(client, name, None)
    if not isinstance(found, Read):
        raise TypeError(f"{client.__name__} has no read {name!r}")
    return found


def _listing(client: type, kind: str) -> Listing[..., Any]:
    found = getattr(client, f"iter_{kind}", None)
    if not isinstance(found, Listing):
        raise TypeError(f"{client.__name__} has no listing {kind!r}")
    return found
