"""Pages of the service's paginated endpoints: one page as asked, or every page with --all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from yieldcli.api import models

# With --all and no --limit, ask for big pages: fewer round trips for the same items.
ALL_PAGE_SIZE = 100


@dataclass
class PageResult:
    """The service's items and meta (of one page, or of the whole set with --all)."""

    kind: str
    items: list[dict[str, Any]]
    meta: dict[str, Any]
    # The same items as typed models, validated once, for tables.
    rows: list[Any]
    # True when the service has pages beyond this one (the table footer says so).
    more_pages: bool = False


FetchPage = Callable[[int | None, int | None], Any]
ParseItem = Callable[[dict[str, Any], int], Any]


def collect(kind: str, fetch: FetchPage, parse_item: ParseItem, *, page: int | None, limit: int | None, fetch_all: bool) -> PageResult:
    if not fetch_all:
        body = models.page(fetch(page, limit), kind)
        rows = [parse_item(item, i) for i, item in enumerate(body.items)]
        return PageResult(kind, body.items, body.meta.to_dict(), rows, more_pages=body.meta.has_more)
    size = limit or ALL_PAGE_SIZE
    items: list[dict[str, Any]] = []
    current = page or 1
    while True:
        body = models.page(fetch(current, size), kind)
        items.extend(body.items)
        if not body.items or not (body.meta.has_more or current < body.meta.total_pages):
            break
        current += 1
    rows = [parse_item(item, i) for i, item in enumerate(items)]
    return PageResult(kind, items, whole_set_meta(len(items)), rows)


def whole_set_meta(count: int) -> dict[str, Any]:
    """--all describes the whole set as one page holding every item."""
    return {"has_more": False, "page": 1, "per_page": count, "total": count, "total_pages": 1}
