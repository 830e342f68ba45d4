"""The field readers of the service's bodies (`yieldcli.api.models` builds its models with them): exact
integers (decimal integer text too), text, APY-like numbers, objects, each refusing a malformed value
with one clear `BodyError` that says where it was."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from yieldcli.errors import ServiceError

if TYPE_CHECKING:
    from decimal import Decimal


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
