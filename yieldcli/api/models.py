"""Typed views of the service's bodies: exact integers, tolerant of extra fields and documented nulls.

The raw dict is kept beside the typed fields: JSON output mirrors the service byte for byte in
meaning, while tables read the typed fields. Anything malformed becomes one clear ServiceError.

Amounts: each amount field is the service's exact integer of base units (`total_position_value`),
a `*_decimal` property gives the same amount in token units as an exact `Decimal`, scaled by
the token's decimals (`Decimal("1.5")` for 1_500_000 of a 6-decimal token), and a
`*_ui_amount_string` property the same as exact text ("1.5"), the name the JSON output uses. The models are
NamedTuples: immutable, and free to import (dataclasses would cost start-up time on every read).
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Annotated, Any, Generic, NamedTuple, TypeVar

from yieldcli.api.fields import (
    BodyError as BodyError,  # named here too: the service's shape errors, as callers know them
)
from yieldcli.api.fields import (
    _require,
    _tokens,
    _where,
    integer,
    number,
    obj,
    optional_integer,
    text,
    token_decimals,
)
from yieldcli.errors import ServiceError

if TYPE_CHECKING:
    from collections.abc import Callable
    from decimal import Decimal

T = TypeVar("T")


def _ui(raw: int | None, decimals: int | None) -> str | None:
    """The amount in token units as exact text (`tokens.ui_amount_string`), the name the command line's
    JSON, NDJSON and CSV and the agent server's reads give it; None when the amount or decimals are unknown."""
    from yieldcli.tokens import ui_amount_string

    return None if raw is None or decimals is None else ui_amount_string(raw, decimals)


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

    @property
    def total_deposited_value_ui_amount_string(self) -> str | None:
        return _ui(self.total_deposited_value, self.decimals)

    @property
    def total_position_value_ui_amount_string(self) -> str | None:
        return _ui(self.total_position_value, self.decimals)

    @property
    def yield_earned_ui_amount_string(self) -> str | None:
        return _ui(self.yield_earned, self.decimals)


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

    @property
    def wallet_part_ui_amount_string(self) -> str | None:
        return _ui(self.wallet_part, self.decimals)

    @property
    def total_balance_ui_amount_string(self) -> str | None:
        return _ui(self.total_balance, self.decimals)

    @property
    def funds_ui_amount_string(self) -> str | None:
        return _ui(self.funds, self.decimals)

    @property
    def amount_of_yield_ui_amount_string(self) -> str | None:
        return _ui(self.amount_of_yield, self.decimals)


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

    @property
    def position_value_ui_amount_string(self) -> str | None:
        return _ui(self.position_value, self.decimals)

    @property
    def yield_earned_ui_amount_string(self) -> str | None:
        return _ui(self.yield_earned, self.decimals)


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
