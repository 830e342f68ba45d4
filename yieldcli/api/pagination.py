"""Pages of the service's paginated endpoints: one page as asked, or every page.

For every page, the first page says how many pages there are; the rest are fetched concurrently
(bounded), and items come out in page order as soon as their page and every earlier one arrived,
so output can stream with at most `concurrency` pages in memory. The same for async callers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import chain
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from yieldcli.api import models
from yieldcli.api.limits import DEFAULT_CONCURRENCY
from yieldcli.api.page_text import Deferred, PositionsPage, positions_page
from yieldcli.concurrency import ordered_map
from yieldcli.errors import YieldError

if TYPE_CHECKING:
    import asyncio

    from yieldcli.api.endpoints import Endpoint

# With --all and no --limit, ask for big pages: fewer round trips for the same items.
ALL_PAGE_SIZE = 100
# With every page wanted, the second page is asked with the first, before the first says how many
# there are: for a list of one page that is one request too many, for a list of many one round trip
# less, as the connections' ramp (`yieldcli.api.fanout`) then starts from two.
ASKED_WITH_THE_FIRST = 1

T = TypeVar("T")
FetchPage = Callable[[int | None, int | None], Any]
# (page numbers, page size, pages in flight) -> their bodies in order: many pages from one thread
# (`ServiceClient.serve_each`), cheaper than a thread a page. A None among the numbers asks nothing
# more until a body before it has been read. A body may come `page_text.Deferred`: decoded when read.
FetchPages = Callable[[Iterable[int | None], int, int], Iterator[Any]]
AsyncFetchPage = Callable[[int | None, int | None], Awaitable[Any]]
ParseItem = Callable[[dict[str, Any], int], Any]
Progress = Callable[[int, int], None]  # (pages done, pages in all)


Entry = tuple[dict[str, Any], Any]  # (the service's raw item, its typed model)


class PageResult:
    """Validated items (raw dict and typed model) and the meta to print after them."""

    def __init__(
        self,
        kind: str,
        entries: Iterable[Entry],
        meta: Callable[[], dict[str, Any]],
        more_pages: dict[str, Any] | None = None,
        pages: Iterable[list[dict[str, Any]] | PositionsPage] | None = None,
    ):
        self.kind = kind
        self.entries = entries
        # The same items a page at a time, raw (or as lines of JSON: `PositionsPage`) and checked as `entries`
        # checks them, for a writer that needs no typed model and writes a page in one call. Both
        # draw on one stream: a reader takes one or the other. None: only `entries` is given.
        self.pages = pages
        # Called once the entries are exhausted: --all only knows the whole set's size at the end.
        self.meta = meta
        # The service's own meta of the one page fetched, when there are more pages (the table footer).
        self.more_pages = more_pages


class Lister(Protocol):
    """A client that serves listing endpoints a page at a time, or many pages at once."""

    def serve(self, endpoint: Endpoint, /, *arguments: Any, **query: Any) -> Any: ...

    def serve_each(
        self,
        endpoint: Endpoint,
        calls: Iterable[tuple[tuple[Any, ...], dict[str, Any]] | None],
        window: int,
        *,
        deferred: bool = False,
    ) -> Iterator[Any]: ...


def listing(
    api: Lister, endpoint: Endpoint, arguments: tuple[Any, ...], query: dict[str, Any]
) -> tuple[FetchPage, FetchPages]:
    """The fetch of one page and of many pages of a listing endpoint, for these arguments and query."""

    def fetch(page: int | None, size: int | None) -> Any:
        return api.serve(endpoint, *arguments, **query, page=page, limit=size)

    def fetch_pages(numbers: Iterable[int | None], size: int, window: int) -> Iterator[Any]:
        calls = (
            None if number is None else (arguments, {**query, "page": number, "limit": size}) for number in numbers
        )
        return api.serve_each(endpoint, calls, window, deferred=True)

    return fetch, fetch_pages


def one_page(kind: str, fetch: FetchPage, parse_item: ParseItem, *, page: int | None, limit: int | None) -> PageResult:
    body = models.page(fetch(page, limit), kind)
    entries = [(item, parse_item(item, i)) for i, item in enumerate(body.items)]
    meta = body.meta.to_dict()
    return PageResult(kind, entries, lambda: meta, meta if body.meta.has_more else None, [body.items])


def all_pages(
    kind: str,
    fetch: FetchPage,
    parse_item: ParseItem,
    *,
    limit: int | None,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
    fetch_pages: FetchPages | None = None,
) -> PageResult:
    size = limit or ALL_PAGE_SIZE
    as_records = [False]  # set by a reader of raw pages: pages of positions may then come as records
    bodies: Iterator[models.Page[dict[str, Any]] | PositionsPage]
    if fetch_pages is None:
        first = _page(kind, fetch, 1, size, None)
        bodies = _pages_in_order(kind, fetch, first, size, concurrency, progress)
    else:
        fanned = _pages_fanned_out(kind, fetch, fetch_pages, size, concurrency, progress, as_records)
        bodies = chain([next(fanned)], fanned)  # the first page now, before any output: its error is the command's
    count = [0]

    def entries() -> Iterator[Entry]:
        for body in bodies:
            assert not isinstance(body, PositionsPage)  # records only for `pages()`
            for item in body.items:
                yield item, parse_item(item, count[0])
                count[0] += 1

    def pages() -> Iterator[list[dict[str, Any]] | PositionsPage]:
        as_records[0] = parse_item is models.position  # the checks `positions_page` makes are position's
        for body in bodies:
            if isinstance(body, PositionsPage):
                count[0] += len(body)
                yield body
                continue
            models.check_items(parse_item, body.items, count[0])
            count[0] += len(body.items)
            yield body.items

    return PageResult(kind, entries(), lambda: whole_set_meta(count[0]), pages=pages())


def collect(
    kind: str,
    fetch: FetchPage,
    parse_item: ParseItem,
    *,
    page: int | None,
    limit: int | None,
    fetch_all: bool,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
    fetch_pages: FetchPages | None = None,
) -> PageResult:
    if fetch_all:
        return all_pages(
            kind,
            fetch,
            parse_item,
            limit=limit,
            concurrency=concurrency,
            progress=progress,
            fetch_pages=fetch_pages,
        )
    return one_page(kind, fetch, parse_item, page=page, limit=limit)


def typed_page(kind: str, body: Any, parse_item: Callable[[dict[str, Any], int], T]) -> models.Page[T]:
    """One page as the library returns it: typed items and the service's meta."""
    raw = models.page(body, kind)
    return models.Page([parse_item(item, i) for i, item in enumerate(raw.items)], raw.meta)


def every_item(
    kind: str,
    fetch: FetchPage,
    parse_item: Callable[[dict[str, Any], int], T],
    *,
    limit: int | None,
    concurrency: int = DEFAULT_CONCURRENCY,
    fetch_pages: FetchPages | None = None,
) -> Iterator[T]:
    result = all_pages(kind, fetch, parse_item, limit=limit, concurrency=concurrency, fetch_pages=fetch_pages)
    for _, item in result.entries:
        yield item


async def every_item_async(
    kind: str,
    fetch: AsyncFetchPage,
    parse_item: Callable[[dict[str, Any], int], T],
    *,
    limit: int | None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> AsyncIterator[T]:
    """`every_item` for async callers: at most `concurrency` pages in flight, items in page order."""
    import asyncio

    size = limit or ALL_PAGE_SIZE

    async def fetch_page(number: int, total: int | None) -> models.Page[dict[str, Any]]:
        with _which_page(kind, number, total):
            return models.page(await fetch(number, size), kind)

    last = await fetch_page(1, None)
    count = 0
    for item in last.items:
        yield parse_item(item, count)
        count += 1
    total = max(last.meta.total_pages, 1)
    if not last.items or (not last.meta.has_more and total <= 1):
        return
    numbers = iter(range(2, total + 1))
    pending: deque[asyncio.Task[models.Page[dict[str, Any]]]] = deque()
    try:
        for number in numbers:
            pending.append(asyncio.ensure_future(fetch_page(number, total)))
            if len(pending) >= max(1, concurrency):
                break
        while pending:
            last = await pending.popleft()
            following = next(numbers, None)
            if following is not None:
                pending.append(asyncio.ensure_future(fetch_page(following, total)))
            for item in last.items:
                yield parse_item(item, count)
                count += 1
    finally:
        for task in pending:
            task.cancel()
    # The set grew while we read it: follow has_more one page at a time.
    number = total
    while last.meta.has_more and last.items:
        number += 1
        last = await fetch_page(number, None)
        for item in last.items:
            yield parse_item(item, count)
            count += 1


def _rest(
    kind: str, fetch: FetchPage, total: int, size: int, concurrency: int
) -> Iterator[models.Page[dict[str, Any]]]:
    """Pages 2 to `total`, in order, `concurrency` at a time, a thread a page."""

    def fetch_page(number: int) -> models.Page[dict[str, Any]]:
        return _page(kind, fetch, number, size, total)

    for _, future in ordered_map(fetch_page, range(2, total + 1), concurrency, "page"):
        yield future.result()


class _PageNumbers:
    """The pages one fan-out asks for: the first and those asked with it, then a pause (None) until
    `total` is known from the first page's answer, then the rest up to it."""

    def __init__(self, asked_with_the_first: int):
        self._next = 1
        self._ahead_until = 1 + asked_with_the_first
        self.total: int | None = None

    def __iter__(self) -> _PageNumbers:
        return self

    def __next__(self) -> int | None:
        if self._next > self._ahead_until and self.total is None:
            return None
        if self.total is not None and self._next > max(self.total, self._ahead_until):
            raise StopIteration
        number, self._next = self._next, self._next + 1
        return number


def whole_set_meta(count: int) -> dict[str, Any]:
    """--all describes the whole set as one page holding every item."""
    return {"has_more": False, "page": 1, "per_page": count, "total": count, "total_pages": 1}


@contextmanager
def _which_page(kind: str, number: int, total: int | None) -> Iterator[None]:
    try:
        yield
    except YieldError as exc:
        # Same class (so the same exit code), but saying which page: nothing partial passes as whole.
        where = f"page {number}" + (f" of {total}" if total else "")
        exc.message = f"{kind} {where}: {exc.message}"
        raise


def _page(kind: str, fetch: FetchPage, number: int, size: int, total: int | None) -> models.Page[dict[str, Any]]:
    with _which_page(kind, number, total):
        return models.page(fetch(number, size), kind)


def _pages_in_order(
    kind: str,
    fetch: FetchPage,
    first: models.Page[dict[str, Any]],
    size: int,
    concurrency: int,
    progress: Progress | None,
) -> Iterator[models.Page[dict[str, Any]]]:
    total, alone = _count(first)
    if progress:
        progress(1, total)
    yield first
    if alone:
        return
    last = first
    for done, last in enumerate(_rest(kind, fetch, total, size, concurrency), start=2):
        if progress:
            progress(done, total)
        yield last
    yield from _grown(kind, fetch, last, total, size)


def _pages_fanned_out(
    kind: str,
    fetch: FetchPage,
    fetch_pages: FetchPages,
    size: int,
    concurrency: int,
    progress: Progress | None,
    as_records: list[bool],
) -> Iterator[models.Page[dict[str, Any]] | PositionsPage]:
    """Every page from one fan-out, in order: the first with the ones asked with it, the rest once the
    first said how many there are. A page asked ahead past the last is never read: closing the
    fan-out drops it, whatever it answered. Once `as_records[0]` is set, a page of positions read
    after it comes as `PositionsPage` when it can (`page_text.positions_page`)."""
    numbers = _PageNumbers(ASKED_WITH_THE_FIRST)
    bodies = fetch_pages(numbers, size, concurrency)
    try:
        with _which_page(kind, 1, None):
            first = models.page(_decoded(_next_body(bodies)), kind)
        total, alone = _count(first)
        numbers.total = 1 if alone else total
        if alone:
            if progress:
                progress(1, total)
            yield first
            return
        # The second page (asked with the first) is read before the first is handed on: reading it is
        # what sends the next pages' requests, which would otherwise wait for the caller's first page.
        pages: list[models.Page[dict[str, Any]] | PositionsPage] = [first]
        for number in range(2, total + 1):
            with _which_page(kind, number, total):
                pages.append(_read(kind, _next_body(bodies), as_records[0]))
            if progress:
                progress(number - 1, total)
            last = pages[-1]
            yield pages.pop(0)
        if progress:
            progress(total, total)
        yield pages.pop()
    finally:
        bodies.close()  # type: ignore[attr-defined]  # a generator: its connections close now
    yield from _grown(kind, fetch, last, total, size)


def _read(kind: str, body: Any, as_records: bool) -> models.Page[dict[str, Any]] | PositionsPage:
    """A page's body as records when asked and possible (`page_text`), else decoded and checked."""
    records = positions_page(body.content) if as_records and isinstance(body, Deferred) else None
    return records if records is not None else models.page(_decoded(body), kind)


def _decoded(body: Any) -> Any:
    return body.value() if isinstance(body, Deferred) else body


def _count(first: models.Page[dict[str, Any]]) -> tuple[int, bool]:
    """How many pages the first page says there are, and whether it says it is the only one."""
    total = max(first.meta.total_pages, 1)
    return total, not first.items or (not first.meta.has_more and total <= 1)


def _grown(
    kind: str, fetch: FetchPage, last: models.Page[dict[str, Any]] | PositionsPage, number: int, size: int
) -> Iterator[models.Page[dict[str, Any]]]:
    """The set grew while we read it (the last page still says has_more): follow it a page at a time."""
    while last.meta.has_more and (len(last) if isinstance(last, PositionsPage) else last.items):
        number += 1
        last = _page(kind, fetch, number, size, None)
        yield last


def _next_body(bodies: Iterator[Any]) -> Any:
    try:
        return next(bodies)
    except StopIteration:
        raise RuntimeError("the pages ended before the last one") from None
