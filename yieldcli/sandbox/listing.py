"""Listings as the service serves them: typed query strings, sorting and 1-based pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from yieldcli.sandbox.responses import BadRequest, error_response
from yieldcli.sandbox.rows import Rows

DEFAULT_LIMIT = 10
INT32_MAX = 2**31 - 1


# ---- query strings -------------------------------------------------------------------------------


class QueryError(Exception):
    pass


def _parse_count(name: str, text: str) -> int:
    # Mirrors the integer parser of the real service's query deserializer (messages included).
    digits = text[1:] if text.startswith("+") else text
    if not digits:
        raise QueryError(f"{name}: cannot parse integer from empty string")
    if not digits.isascii() or not digits.isdigit():
        raise QueryError(f"{name}: invalid digit found in string")
    value = int(digits)
    if value > INT32_MAX:
        raise QueryError(f"{name}: number too large to fit in target type")
    return value


def _parse_sort_order(name: str, text: str) -> str:
    if text not in ("asc", "desc"):
        raise QueryError(f"{name}: unknown variant `{text}`, expected `asc` or `desc`")
    return text


_QUERY_KINDS: dict[str, Callable[[str, str], Any]] = {
    "page": _parse_count,
    "limit": _parse_count,
    "sort_order": _parse_sort_order,
}


def parse_query(query: str, fields: tuple[str, ...]) -> dict[str, Any]:
    """The known fields of a query string, typed; unknown fields are ignored, as upstream does."""
    out: dict[str, Any] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name not in fields:
            continue
        if name in out:
            raise QueryError(f"duplicate field `{name}`")
        parse = _QUERY_KINDS.get(name)
        out[name] = parse(name, value) if parse else value
    return out


# ---- listings ------------------------------------------------------------------------------------


def paginate(
    rows: Rows,
    *,
    page: int = 0,
    limit: int = 0,
    sort_field: str | None = None,
    descending: bool = False,
) -> dict[str, Any]:
    """`{data, meta}` for 1-based pages: page 0 is page 1, limit 0 is the default."""
    per_page = limit or DEFAULT_LIMIT
    page = max(page, 1)
    total = len(rows)
    total_pages = -(-total // per_page)
    start = (page - 1) * per_page
    stop = min(start + per_page, total)
    if start >= total:
        data: list[dict[str, Any]] = []
    elif sort_field is None:
        data = [rows.get(i) for i in range(start, stop)]
    else:
        order = sorted(range(total), key=lambda i: rows.key(i, sort_field), reverse=descending)
        data = [rows.get(order[i]) for i in range(start, stop)]
    return {
        "data": data,
        "meta": {
            "has_more": page < total_pages,
            "page": page,
            "per_page": per_page,
            "total": total,
            "total_pages": total_pages,
        },
    }


def sorting(q: dict[str, Any], balance_field: str, allowed: tuple[str, ...]) -> tuple[str | None, bool]:
    sort_by = q.get("sort_by")
    order = q.get("sort_order")
    if sort_by in (None, ""):
        if order is None:
            return None, False
        sort_by = "balance"
    field_name = balance_field if sort_by == "balance" else sort_by
    if field_name not in allowed:
        choices = ", ".join(("balance", *allowed))
        raise BadRequest(error_response(400, f"Invalid sort_by: {sort_by!r}; expected one of: {choices}"))
    # Without an order, the largest balances come first.
    return field_name, order != "asc"
