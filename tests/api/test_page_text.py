"""A page of positions read as records (`yieldcli.api.page_text`): its lines are the stdlib's bytes for
the items the plain path decodes, or the page is not read this way at all. Random pages, written the
way the service writes them and in every way it might not (fields in another order, a field twice,
escapes, spaces, numbers written otherwise, fields of another type, a twin sent by the service)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import example, given, settings
from hypothesis import strategies as st

from yieldcli import exact_json
from yieldcli.api import models
from yieldcli.api.page_text import positions_page
from yieldcli.errors import YieldError

ORDER = (
    "apy",
    "decimals",
    "fund_id",
    "last_updated",
    "strategy_id",
    "strategy_name",
    "token_address",
    "token_name",
    "token_symbol",
    "total_deposited_value",
    "total_position_value",
    "yield_earned",
    "fund_status",
)

SEPARATOR = "\u0000yield line break\u0000"  # what separates the records when a page is written at once
texts = st.one_of(
    st.sampled_from(["USDC", "USD Coin", "Sandbox Yield Strategy", "2025-06-02T12:00:00+00:00", "", "é€𝔘"]),
    st.text(max_size=12),  # quotes, backslashes, control characters, any code point
    st.just(SEPARATOR),
)
amounts = st.one_of(
    st.integers(min_value=0, max_value=10**12),
    st.integers(min_value=-(2**127), max_value=2**128 - 1),  # u128 and below zero
    st.just(0),
)
apys = st.one_of(
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False),  # 1e-05, 1e+16, -0.0: written with an exponent or not
    st.floats(min_value=0.01, max_value=30),
    st.integers(min_value=-5, max_value=50),
)
optional_text = st.one_of(st.just(KeyError), st.none(), texts)  # KeyError: the field is not sent


@st.composite
def items(draw: Any) -> dict[str, Any]:
    item = {
        "apy": draw(apys),
        "decimals": draw(st.one_of(st.integers(0, 12), st.integers(-3, 300))),
        "fund_id": draw(texts),
        "last_updated": draw(texts),
        "strategy_id": draw(optional_text),
        "strategy_name": draw(texts),
        "token_address": draw(texts),
        "token_name": draw(texts),
        "token_symbol": draw(texts),
        "total_deposited_value": draw(amounts),
        "total_position_value": draw(amounts),
        "yield_earned": draw(amounts),
        "fund_status": draw(optional_text),
    }
    item = {k: v for k, v in item.items() if v is not KeyError}
    if draw(st.integers(0, 9)) == 0:  # a field of another type, or one the position has not
        key = draw(st.sampled_from([*ORDER, "extra", "total_deposited_value_ui_amount_string", "nested"]))
        item[key] = draw(st.one_of(st.booleans(), texts, amounts, st.just({"yield_earned": 1}), st.just([1])))
    if draw(st.integers(0, 9)) == 0:  # another order
        keys = draw(st.permutations(list(item)))
        item = {k: item[k] for k in keys}
    return item


def _flat(apy: float, decimals: int, text: str, amount: int) -> dict[str, Any]:
    """An item whose texts are all `text` and whose amounts are all `amount`."""
    return {"apy": apy, "decimals": decimals, **dict.fromkeys(ORDER[2:9], text), **dict.fromkeys(ORDER[9:12], amount)}


def _written(page: dict[str, Any], how: str) -> bytes:
    if how == "msgspec":  # floats as msgspec writes them: 0.00001, 1e16 (json.dumps: 1e-05, 1e+16)
        return msgspec.json.encode(page)
    if how == "compact":
        return json.dumps(page, separators=(",", ":"), ensure_ascii=False).encode()
    if how == "ascii":
        return json.dumps(page, separators=(",", ":")).encode()
    return json.dumps(page, ensure_ascii=False).encode()


def _with_duplicate(body: bytes, key: str) -> bytes:
    """The first item with `key` sent a second time, first."""
    return body.replace(b'"data":[{', b'"data":[{"' + key.encode() + b'":1,', 1)


def _plain(body: bytes) -> list[dict[str, Any]] | None:
    """The items as the plain path reads them (decoded, paged, checked), or None when it refuses them."""
    try:
        page = models.page(exact_json.loads(body), "positions")
        models.check_items(models.position, page.items, 0)
    except (ValueError, YieldError):
        return None
    return page.items


def _stdlib_lines(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


@settings(max_examples=400, deadline=None)
@given(
    st.lists(items(), min_size=1, max_size=5),
    st.sampled_from(["compact", "compact", "msgspec", "ascii", "spaced"]),
    st.one_of(st.none(), st.sampled_from(ORDER)),
)
@example([_flat(1e-05, 6, "x", 1)], "compact", None)
@example([_flat(1e-05, 6, "x", 1)], "msgspec", None)
@example([_flat(1e16, 6, "x", 1)], "msgspec", None)
@example([_flat(1.0, 6, SEPARATOR, 1)] * 2, "compact", None)
@example([_flat(-0.0, 0, "x", -1)], "compact", None)
def test_the_lines_are_the_stdlibs_or_the_page_is_not_read_as_records(
    page_items: list[dict[str, Any]], how: str, twice: str | None
) -> None:
    meta = {"has_more": False, "page": 1, "per_page": 100, "total": len(page_items), "total_pages": 1}
    body = _written({"data": page_items, "meta": meta}, how)
    if twice is not None:
        body = _with_duplicate(body, twice)
    read = positions_page(body)
    if read is None:
        return
    plain = _plain(body)
    assert plain is not None, "read as records a page the plain path refuses"
    assert read.lines() == _stdlib_lines(plain)
    assert read.meta.to_dict() == meta
    assert len(read) == len(plain)


def test_the_service_s_own_pages_are_read_as_records() -> None:
    """What the sandbox writes (and the service, in its order): read this way, not declined."""
    item = {
        "apy": 8.42,
        "decimals": 6,
        "fund_id": "f05096b0",
        "last_updated": "2025-06-02T12:00:00+00:00",
        "strategy_id": "sandbox-0000-4000-8000-000000000001",
        "strategy_name": "Sandbox Yield Strategy",
        "token_address": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
        "token_name": "USD Coin",
        "token_symbol": "USDC",
        "total_deposited_value": 2500000000,
        "total_position_value": 2547318402,
        "yield_earned": 47318402,
        "fund_status": "Live",
    }
    without_status = {k: v for k, v in item.items() if k not in ("fund_status", "strategy_id")}
    meta = {"has_more": True, "page": 2, "per_page": 2, "total": 9, "total_pages": 5}
    body = _written({"data": [item, without_status], "meta": meta}, "compact")
    read = positions_page(body)
    assert read is not None
    assert read.lines() == _stdlib_lines([item, without_status])


def test_a_page_the_stdlib_would_write_otherwise_is_declined() -> None:
    item = _flat(8.42, 6, "x", 5)
    meta = {"has_more": False, "page": 1, "per_page": 1, "total": 1, "total_pages": 1}
    body = _written({"data": [item], "meta": meta}, "compact")
    assert positions_page(body) is not None
    for changed in (
        body.replace(b'"apy":8.42', b'"apy":8.420'),  # decoded as 8.42: json.dumps writes 8.42
        body.replace(b'"yield_earned":5', b'"yield_earned":-0'),
        body.replace(b'"fund_id":"x"', b'"fund_id":"\\u0078"'),
        body.replace(b'"apy":8.42', b'"apy":1e-05'),
        body.replace(b'"apy":8.42', b'"apy":0.00001'),  # msgspec's text for 1e-05, not the stdlib's
        body.replace(b'"apy":8.42', b'"apy":1e16'),
        _with_duplicate(body, "yield_earned"),
        body.replace(b'"yield_earned":5', b'"yield_earned":5,"yield_earned_ui_amount_string":"5"'),
        body.replace(b'"apy":8.42,"decimals":6', b'"decimals":6,"apy":8.42'),
    ):
        assert changed != body
        assert positions_page(changed) is None, changed
