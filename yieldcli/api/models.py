"""Typed views of the service's bodies: exact integers, tolerant of extra fields and documented nulls.

The raw dict is kept beside the typed fields: JSON output mirrors the service byte for byte in
meaning, while tables read the typed fields. Anything malformed becomes one clear ServiceError.

Amounts: each amount field is the service's exact integer of base units (`total_position_value`),
and a `*_decimal` property gives the same amount in token units as an exact `Decimal`, scaled by
the token's decimals (`Decimal("1.5")` for 1_500_000 of a 6-decimal token). The models are
NamedTuples: immutable, and free to import (dataclasses would cost start-up time on every read).
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Annotated, Any, Generic, NamedTuple, TypeVar

from yieldcli.errors import ServiceError

if TYPE_CHECKING:
    from collections.abc import Callable
    from decimal import Decimal

T = TypeVar("T")


class BodyError(ServiceError):
    """The service's answer does not have the shape the interface describes."""

    kind = "service.body"


def _tokens(raw: int, decimals: int) -> Decimal:
    from yieldcli.amounts import scale  # decimal is imported only by who asks for token units

    return scale(raw, decimals)


def _where(what: str, index: int | None) -> str:
    return what if index is None else f"{what} #{index + 1}"


def _require(item: dict[str, Any], name: str, where: str) -> Any:
    if name not in item:
        raise BodyError(f"the service sent {where} without the field {name!r}")
    return item[name]


def integer(item: dict[str, Any], name: str, where: str) -> int:
    """An exact integer; decimal integer text is accepted too (some fields are strings by design)."""
    return _integer(_require(item, name, where), name, where)


def token_decimals(item: dict[str, Any], where: str) -> int:
    """A mint's decimals: a u8 on chain, so 0-255; anything else would make amounts nonsense (or,
    with 10**decimals, make formatting them take forever)."""
    value = integer(item, "decimals", where)
    if not 0 <= value <= 255:
        raise BodyError(f"the service sent {where} with decimals={value}, which no token has (0-255)")
    return value


def optional_integer(item: dict[str, Any], name: str, where: str) -> int | None:
    """A field the interface documents as nullable: an exact integer or None."""
    value = _require(item, name, where)
    return None if value is None else _integer(value, name, where)


def _integer(value: object, name: str, where: str) -> int:
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


class Page(NamedTuple, Generic[T]):
    """One page of a paginated endpoint: its items and the service's pagination meta."""

    items: list[T]
    meta: Meta


def page(body: Any, what: str) -> Page[dict[str, Any]]:
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
    status_per_asset: dict[str, str] | None = None  # each fund's status by mint, when the service says


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
    statuses = body.get("status_per_asset")
    return Strategy(
        strategy_id=text(body, "strategy_id", where),
        strategy_name=text(body, "strategy_name", where, default=""),
        assets=assets,
        apy=number(body, "apy", where),
        apy_per_asset=per_asset,
        status_per_asset={k: v for k, v in statuses.items() if type(v) is str} if type(statuses) is dict else None,
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
    fund_status: str | None = None  # Live, Paused or WithdrawOnly, when the service says

    @property
    def total_deposited_value_decimal(self) -> Decimal:
        return _tokens(self.total_deposited_value, self.decimals)

    @property
    def total_position_value_decimal(self) -> Decimal:
        return _tokens(self.total_position_value, self.decimals)

    @property
    def yield_earned_decimal(self) -> Decimal:
        return _tokens(self.yield_earned, self.decimals)


# Every field of the usual item in one C call, and the types it then has (apy a plain float).
_position_fields = itemgetter(*Position._fields[:-1])
_POSITION_TYPES = (str, str, str, int, str, str, int, int, int, float, str)


def position(item: dict[str, Any], index: int | None = None) -> Position:
    """One position, every field checked; the common well-formed item is read in one pass (a page of
    ndjson is streamed at memory speed), anything else by the field-by-field checks that say what is wrong."""
    try:
        values = _position_fields(item)
    except KeyError:
        values = None
    if values is not None and tuple(map(type, values)) == _POSITION_TYPES and 0 <= values[3] <= 255:
        status = item.get("fund_status")  # inline, and tuple.__new__ (see below): the per-item hot path
        return tuple.__new__(Position, (*values, status if type(status) is str else None))
    get = item.get
    address, symbol, name, decimals = get("token_address"), get("token_symbol"), get("token_name"), get("decimals")
    fund_id, strategy_name, last_updated = get("fund_id"), get("strategy_name"), get("last_updated")
    deposited, value, earned, apy = (
        get("total_deposited_value"),
        get("total_position_value"),
        get("yield_earned"),
        get("apy"),
    )
    if (
        type(address) is str
        and type(symbol) is str
        and type(name) is str
        and type(fund_id) is str
        and type(strategy_name) is str
        and type(last_updated) is str
        and type(decimals) is int
        and 0 <= decimals <= 255
        and type(deposited) is int
        and type(value) is int
        and type(earned) is int
        and (apy is None or isinstance(apy, (int, float)) and not isinstance(apy, bool))
    ):
        # tuple.__new__: the NamedTuple's own __new__ is Python, a third of the time per item.
        return tuple.__new__(
            Position,
            (address, symbol, name, decimals, fund_id, strategy_name, deposited, value, earned, apy, last_updated)
            + (_status(item),),
        )
    return _checked_position(item, index)


def check_items(parse: Callable[[dict[str, Any], int], Any], items: list[dict[str, Any]], start: int) -> None:
    """Raise what `[parse(item, start + i) ...]` would raise, without building the typed items: for a
    writer of the raw items. A page of well-formed positions is checked in one C call (msgspec's
    converter, whose rules are at least as strict as `position`'s one-pass read); anything it refuses
    (a u128 in a string, a marked float, a bad field) goes to `parse`, which accepts it or says why not."""
    if parse is position:
        import msgspec

        try:
            msgspec.convert(items, _position_shape())
            return
        except msgspec.ValidationError:
            pass
    for i, item in enumerate(items):
        parse(item, start + i)


_shapes: dict[str, Any] = {}


def _position_shape() -> Any:
    """`list[...]` of a msgspec Struct with Position's fields and the one-pass read's rules."""
    if "position" not in _shapes:
        import msgspec

        shape = msgspec.defstruct(
            "PositionShape",
            [
                *((name, str) for name in ("token_address", "token_symbol", "token_name")),
                ("decimals", Annotated[int, msgspec.Meta(ge=0, le=255)]),
                ("fund_id", str),
                ("strategy_name", str),
                *((name, int) for name in ("total_deposited_value", "total_position_value", "yield_earned")),
                ("apy", float | None),  # an int is accepted as a float, a bool is not
                ("last_updated", str),
            ],
            gc=False,
        )
        _shapes["position"] = list[shape]  # type: ignore[valid-type]
    return _shapes["position"]


def _checked_position(item: dict[str, Any], index: int | None) -> Position:
    where = _where("position", index)
    return Position(
        token_address=text(item, "token_address", where),
        token_symbol=text(item, "token_symbol", where, default=""),
        token_name=text(item, "token_name", where, default=""),
        decimals=token_decimals(item, where),
        fund_id=text(item, "fund_id", where, default=""),
        strategy_name=text(item, "strategy_name", where, default=""),
        total_deposited_value=integer(item, "total_deposited_value", where),
        total_position_value=integer(item, "total_position_value", where),
        yield_earned=integer(item, "yield_earned", where),
        apy=number(item, "apy", where),
        last_updated=text(item, "last_updated", where, default=""),
        fund_status=_status(item),
    )


def _status(item: dict[str, Any]) -> str | None:
    return status if type(status := item.get("fund_status")) is str else None


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

    @property
    def total_balance_decimal(self) -> Decimal:
        return _tokens(self.total_balance, self.decimals)

    @property
    def wallet_part_decimal(self) -> Decimal:
        return _tokens(self.wallet_part, self.decimals)

    @property
    def funds_decimal(self) -> Decimal | None:
        return None if self.funds is None else _tokens(self.funds, self.decimals)

    @property
    def amount_of_yield_decimal(self) -> Decimal | None:
        return None if self.amount_of_yield is None else _tokens(self.amount_of_yield, self.decimals)


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
        decimals=token_decimals(item, where),
        total_balance=integer(item, "total_balance", where),
        funds=optional_integer(part, "funds", part_where) if part else None,
        amount_of_yield=optional_integer(part, "amount_of_yield", part_where)
        if part and "amount_of_yield" in part
        else None,
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

    @property
    def decimals(self) -> int | None:
        """The service sends no decimals here, only the asset's symbol: known for the supported tokens."""
        from yieldcli.tokens import by_symbol

        token = by_symbol(self.base_asset)
        return token.decimals if token else None

    @property
    def position_value_decimal(self) -> Decimal | None:
        decimals = self.decimals
        return None if decimals is None else _tokens(self.position_value, decimals)

    @property
    def yield_earned_decimal(self) -> Decimal | None:
        decimals = self.decimals
        return None if decimals is None else _tokens(self.yield_earned, decimals)


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
