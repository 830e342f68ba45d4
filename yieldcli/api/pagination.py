"""Pages of the service's paginated endpoints: one page as asked, or every page with --all.

With --all the first page says how many pages there are; the rest are fetched concurrently
(bounded), and items come out in page order as soon as their page and every earlier one arrived,
so output can stream with at most `concurrency` pages in memory.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from yieldcli.api import models
from yieldcli.concurrency import ordered_map
from yieldcli.errors import YieldError

# With --all and no --limit, ask for big pages: fewer round trips for the same items.
ALL_PAGE_SIZE = 100
# Enough to hide latency on 100-page sets; 429 answers (with Retry-After) slow us down when a service objects.
DEFAULT_CONCURRENCY = 16

FetchPage = Callable[[int | None, int | None], Any]
ParseItem = Callable[[dict[str, Any], int], Any]
Progress = Callable[[int, int], None]  # (pages done, pages in all)


class PageResult:
    """Validated items (raw dict and typed model) and the meta to print after them."""

    def __init__(self, kind: str, entries: Iterable[tuple[dict[str, Any], Any]],
                 meta: Callable[[], dict[str, Any]], more_pages: dict[str, Any] | None = None):
        self.kind = kind
        self.entries = entries
        # Called once the entries are exhausted: --all only knows the whole set's size at the end.
        self.meta = meta
        # The service's own meta of the one page fetched, when there are more pages (the table footer).
        self.more_pages = more_pages


def one_page(kind: str, fetch: FetchPage, parse_item: ParseItem, *, page: int | None, limit: int | None) -> PageResult:
    body = models.page(fetch(page, limit), kind)
    entries = [(item, parse_item(item, i)) for i, item in enumerate(body.items)]
    meta = body.meta.to_dict()
    return PageResult(kind, entries, lambda: meta, more_pages=meta if body.meta.has_more else None)


def all_pages(
    kind: str,
    fetch: FetchPage,
    parse_item: ParseItem,
    *,
    limit: int | None,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Progress | None = None,
) -> PageResult:
    size = limit or ALL_PAGE_SIZE
    first = _page(kind, fetch, 1, size, None)
    count = [0]

    def entries() -> Iterator[tuple[dict[str, Any], Any]]:
        for body in _pages_in_order(kind, fetch, first, size, concurrency, progress):
            for item in body.items:
                yield item, parse_item(item, count[0])
                count[0] += 1

    return PageResult(kind, entries(), lambda: whole_set_meta(count[0]))


def collect(kind: str, fetch: FetchPage, parse_item: ParseItem, *, page: int | None, limit: int | None,
            fetch_all: bool, concurrency: int = DEFAULT_CONCURRENCY, progress: Progress | None = None) -> PageResult:
    if fetch_all:
        return all_pages(kind, fetch, parse_item, limit=limit, concurrency=concurrency, progress=progress)
    return one_page(kind, fetch, parse_item, page=page, limit=limit)


def whole_set_meta(count: int) -> dict[str, Any]:
    """--all describes the whole set as one page holding every item."""
    return {"has_more": False, "page": 1, "per_page": count, "total": count, "total_pages": 1}


def _page(kind: str, fetch: FetchPage, number: int, size: int, total: int | None) -> models.Page:
    try:
        return models.page(fetch(number, size), kind)
    except YieldError as exc:
        # Same class (so the same exit code), but saying which page: nothing partial passes as whole.
        where = f"page {number}" + (f" of {total}" if total else "")
        exc.message = f"{kind} {where}: {exc.message}"
        raise


def _pages_in_order(kind, fetch, first: models.Page, size: int, concurrency: int, progress: Progress | None) -> Iterator[models.Page]:
    total = max(first.meta.total_pages, 1)
    if progress:
        progress(1, total)
    yield first
    if not first.items or (not first.meta.has_more and total <= 1):
        return
    last: models.Page = first
    done = 1
    fetch_page = lambda number: _page(kind, fetch, number, size, total)  # noqa: E731
    for _, future in ordered_map(fetch_page, range(2, total + 1), concurrency, "page"):
        last = future.result()
        done += 1
        if progress:
            progress(done, total)
        yield last
    # The set grew while we read it: follow has_more one page at a time.
    number = total
    while last.meta.has_more and last.items:
        number += 1
        last = _page(kind, fetch, number, size, None)
        yield last
