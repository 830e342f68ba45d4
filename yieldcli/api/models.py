"""Typed views of the service's bodies: exact integers, tolerant of extra fields and documented nulls.

The raw dict is kept beside the typed fields: JSON output mirrors the service byte for byte in
meaning, while tables read the typed fields. Anything malformed becomes one clear ServiceError.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from yieldcli.errors import ServiceError


class BodyError(ServiceError):
    """The service's answer does not have the shape the interface describes."""


def _where(what: str, index: int | None) -> str:
    return what if index is None else f"{what} #{index + 1}"


def _require(item: dict[str, Any], name: str, where: str) -> Any:
    if name not in item:
        raise BodyError(f"the service sent {where} without the field {name!r}")
    return item[name]


def integer(item: dict[str, Any], name: str, where: str, *, nullable: bool = False) -> int | None:
    """An exact integer; decimal integer text is accepted too (some fields are strings by design)."""
    value = _require(item, name, where)
    if value is None and nullable:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise BodyError(f"the service sent {where} with {name}={value!r}, which is not an integer")


def text(item: dict[str, Any], name: str, where: str, *, default: str | None = None) -> str:
    value = item.get(name, default)
    if value is None and default is not None:
        return default
    if not isinstance(value, str):
        raise BodyError(f"the service sent {where} with {name}={value!r}, which is not text")
    return value


def number(item: dict[str, Any], name: str, where: str) -> float | int | None:
    """APY-like figures: not money, so a JSON number as the service sent it (or None)."""
    value = item.get(name)
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    raise BodyError(f"the service sent {where} with {name}={value!r}, which is not a number")


def obj(body: Any, what: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BodyError(f"the service sent {what} that is not a JSON object ({type(body).__name__})")
    return body


class Meta(NamedTuple):
    has_more: bool
    page: int
    per_page: int
    total: int
    total_pages: int

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()


class Page(NamedTuple):
    items: list[dict[str, Any]]
    meta: Meta


def page(body: Any, what: str) -> Page:
    body = obj(body, f"a page of {what}")
    items = _require(body, "data", f"a page of {what}")
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise BodyError(f"the service sent a page of {what} whose 'data' is not a list of objects")
    raw_meta = obj(_require(body, "meta", f"a page of {what}"), f"the pagination meta of {what}")
    where = f"the pagination meta of {what}"
    has_more = raw_meta.get("has_more")
    if not isinstance(has_more, bool):
        raise BodyError(f"the service sent {where} with has_more={has_more!r}, which is not true/false")
    meta = Meta(
        has_more=has_more,
        page=integer(raw_meta, "page", where),
        per_page=integer(raw_meta, "per_page", where),
        total=integer(raw_meta, "total", where),
        total_pages=integer(raw_meta, "total_pages", where),
    )
    return Page(items, meta)


class Strategy(NamedTuple):
    strategy_id: str
    strategy_name: str
    assets: list[str]
    apy: float | int | None
    apy_per_asset: dict[str, Any]


def strategy(body: Any) -> Strategy:
    where = "strategy info"
    body = obj(body, where)
    if "message" in body and "strategy_id" not in body:
        raise ServiceError(str(body["message"]))
    assets = _require(body, "assets", where)
    if not isinstance(assets, list) or not all(isinstance(a, str) for a in assets):
        raise BodyError("the service sent strategy info whose 'assets' is not a list of mint addresses")
    per_asset = body.get("apy_per_asset") or {}
    if not isinstance(per_asset, dict):
        raise BodyError("the service sent strategy info whose 'apy_per_asset' is not an object")
    return Strategy(
        strategy_id=text(body, "strategy_id", where),
        strategy_name=text(body, "strategy_name", where, default=""),
        assets=assets,
        apy=number(body, "apy", where),
        apy_per_asset=per_asset,
    )


class Position(NamedTuple):
    token_address: str
    token_symbol: str
    token_name: str
    decimals: int
    fund_id: str
    strategy_name: str
    total_deposited_value: int
    total_position_value: int
    yield_earned: int
    apy: float | int | None
    last_updated: str


def position(item: dict[str, Any], index: int | None = None) -> Position:
    where = _where("position", index)
    return Position(
        token_address=text(item, "token_address", where),
        token_symbol=text(item, "token_symbol", where, default=""),
        token_name=text(item, "token_name", where, default=""),
        decimals=integer(item, "decimals", where),
        fund_id=text(item, "fund_id", where, default=""),
        strategy_name=text(item, "strategy_name", where, default=""),
        total_deposited_value=integer(item, "total_deposited_value", where),
        total_position_value=integer(item, "total_position_value", where),
        yield_earned=integer(item, "yield_earned", where),
        apy=number(item, "apy", where),
        last_updated=text(item, "last_updated", where, default=""),
    )


class Balance(NamedTuple):
    token_address: str
    token_symbol: str
    token_name: str
    decimals: int
    total_balance: int
    # The position part; None when the wallet has no position in this token.
    funds: int | None
    amount_of_yield: int | None
    fund_apy: float | int | None
    fund_id: str | None

    @property
    def wallet_part(self) -> int:
        return self.total_balance - (self.funds or 0)


def balance(item: dict[str, Any], index: int | None = None) -> Balance:
    where = _where("balance", index)
    part = item.get("yield_balance")
    if part is not None and not isinstance(part, dict):
        raise BodyError(f"the service sent {where} whose yield_balance is not an object")
    part_where = f"{where} (yield_balance)"
    return Balance(
        token_address=text(item, "token_address", where),
        token_symbol=text(item, "token_symbol", where, default=""),
        token_name=text(item, "token_name", where, default=""),
        decimals=integer(item, "decimals", where),
        total_balance=integer(item, "total_balance", where),
        funds=integer(part, "funds", part_where, nullable=True) if part else None,
        amount_of_yield=integer(part, "amount_of_yield", part_where, nullable=True) if part and "amount_of_yield" in part else None,
        fund_apy=number(part, "fund_apy", part_where) if part else None,
        fund_id=(part.get("fund_id") if part and isinstance(part.get("fund_id"), str) else None),
    )


class YieldRecord(NamedTuple):
    fund_id: str
    fund_name: str
    base_asset: str
    position_value: int
    yield_earned: int
    apy: float | int | None
    entry_date: str
    last_updated: str


def yield_record(item: dict[str, Any], index: int | None = None) -> YieldRecord:
    where = _where("yield record", index)
    return YieldRecord(
        fund_id=text(item, "fund_id", where, default=""),
        fund_name=text(item, "fund_name", where, default=""),
        base_asset=text(item, "base_asset", where, default=""),
        position_value=integer(item, "position_value", where),
        yield_earned=integer(item, "yield_earned", where),
        apy=number(item, "apy", where),
        entry_date=text(item, "entry_date", where, default=""),
        last_updated=text(item, "last_updated", where, default=""),
    )
