"""A page of positions for a writer of the raw items (NDJSON), read without a dict per item: one typed
decode (msgspec, in C) checks the page and gives each item as a record whose fields are the service's,
in the order it sends them, with a slot after each base-unit amount for its token-unit twin
(`<name>_ui_amount_string`, set by the writer, `yieldcli.cli.render.amount_lines`); `lines()` writes
the records as JSON lines, in C as well.

Those lines are exactly `json.dumps(item, ensure_ascii=False)` of the items `exact_json.loads` would
have decoded (with the twins, as `amount_fields.adder` adds them), because the page is read this way
only when the service's own bytes for its items are what msgspec writes for the records: same fields,
in the same order, none twice, no other, numbers and strings written alike (`positions_page` encodes
the records and compares). msgspec's text then differs from the stdlib's only in the spaces after
separators, which `lines()` puts in, and in floats outside [1e-4, 1e16) (`exact_json`), refused here.
Any other page (another order of fields, a twin the service sent itself, a nested object...) is None,
and decoded as every other page is.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from operator import attrgetter, is_not
from typing import Annotated, Any

from yieldcli.api.models import Meta

# A position's fields in the order the service sends them; each amount is followed by its twin's slot.
AMOUNTS = ("total_deposited_value", "total_position_value", "yield_earned")
_TWIN = "_ui_amount_string"  # tokens.UI_AMOUNT_SUFFIX (the api does not import the token table)


class Deferred:
    """A body answered 2xx, not decoded yet (`core.ClientCore.step`, asked to defer): its bytes, for a
    reader that needs no decoded value, and `value()`, the decoded JSON (or the error decoding it
    raises) as an answer not deferred would have been."""

    __slots__ = ("content", "_decode")

    def __init__(self, content: bytes, decode: Callable[[], Any]):
        self.content = content
        self._decode = decode

    def value(self) -> Any:
        return self._decode()


class PositionsPage:
    """One page of positions read as records (`records`: msgspec Structs, whose twins may be set)."""

    __slots__ = ("records", "meta")

    def __init__(self, records: list[Any], meta: Meta):
        self.records = records
        self.meta = meta

    def __len__(self) -> int:
        return len(self.records)

    def lines(self) -> bytes:
        """`"".join(json.dumps(r, ensure_ascii=False) + "\\n" for r in records)` of the records as
        dicts (a twin not set is left out), UTF-8.

        The records are encoded at once with a separator string between them, which is then replaced
        by a line break: in the formatted text the separator's `, "...", ` follows a record's `}` and
        precedes the next `{`, and nothing inside a record can match it: a record holds no list (every
        field is a scalar), so a string in it is a value, after `": `, or a key, before `": `."""
        import msgspec

        codec = _codec()
        records = self.records
        spaced: list[Any] = [_SEPARATOR] * (2 * len(records) - 1)
        spaced[::2] = records
        text: bytes = msgspec.json.format(codec["encoder"].encode(spaced), indent=0)
        return text[1:-1].replace(codec["separator"], b"\n") + b"\n"


# Between records when a page is encoded at once (as exact_json.utf8_lines does).
_SEPARATOR = "\u0000yield line break\u0000"
_TWIN_BYTES = (_TWIN + '"').encode()
_NOT_NONE = partial(is_not, None)


def positions_page(content: bytes) -> PositionsPage | None:
    """The page in `content` as records, or None when their lines could differ from the stdlib's."""
    if _TWIN_BYTES in content:  # a twin the service sent itself: the records would hold it
        return None
    import msgspec

    codec = _codec()
    try:
        page = codec["decoder"].decode(content)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    records = page.data
    if not records or not content.startswith(b'{"data":'):
        return None
    if not content.startswith(codec["encoder"].encode(records), 8):  # the service's bytes are msgspec's
        return None
    if not _floats_alike(list(filter(_NOT_NONE, map(attrgetter("apy"), records)))):
        return None
    meta = page.meta
    return PositionsPage(records, Meta(meta.has_more, meta.page, meta.per_page, meta.total, meta.total_pages))


def _floats_alike(floats: list[float]) -> bool:
    """msgspec writes each as the stdlib does: none needs an exponent (1e-05, 1e+16) or is not finite."""
    if not floats or (min(map(abs, floats)) >= 1e-4 and max(map(abs, floats)) < 1e16):
        return True  # the common page, in two C loops
    return all(1e-4 <= abs(value) < 1e16 or value == 0 for value in floats)


_cache: dict[str, Any] = {}


def _codec() -> dict[str, Any]:
    if not _cache:
        import msgspec

        optional: Any = str | None | msgspec.UnsetType  # absent (UNSET, left out when written) or sent
        twin: Any = str | msgspec.UnsetType
        fields: list[Any] = [
            ("apy", float | None),
            ("decimals", Annotated[int, msgspec.Meta(ge=0, le=255)]),
            ("fund_id", str),
            ("last_updated", str),
            ("strategy_id", optional, msgspec.UNSET),
            *((name, str) for name in ("strategy_name", "token_address", "token_name", "token_symbol")),
        ]
        for name in AMOUNTS:
            fields += [(name, int), (name + _TWIN, twin, msgspec.UNSET)]
        fields.append(("fund_status", optional, msgspec.UNSET))
        # The rules of `models.check_items` (and of `models.position`), no looser: no other field, none
        # of another type; `check_items` is not run again on these pages.
        record = msgspec.defstruct("PositionRecord", fields, kw_only=True, forbid_unknown_fields=True, gc=False)
        meta = msgspec.defstruct(
            "PageMeta", [("has_more", bool), *((name, int) for name in ("page", "per_page", "total", "total_pages"))]
        )
        page = msgspec.defstruct("PositionsPage", [("data", list[record]), ("meta", meta)])  # type: ignore[valid-type]
        _cache["decoder"] = msgspec.json.Decoder(page)
        _cache["encoder"] = msgspec.json.Encoder()
        _cache["separator"] = b", " + msgspec.json.encode(_SEPARATOR) + b", "
    return _cache
