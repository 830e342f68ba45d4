"""The token-unit twins (`amount_fields`) of a page read as records (`yieldcli.api.page_text`): each
record has a slot after each base-unit amount for its twin, set here, so that the page's lines are,
byte for byte, what json.dumps writes of each record with its twins beside its amounts.

The twins of a page are made with few Python operations an amount: the common page (one `decimals`
for all, no amount below zero) in C loops over the page, and any other record by `ui_amount_string`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from itertools import repeat
from operator import attrgetter
from typing import Any, Protocol


class RecordPage(Protocol):
    records: list[Any]

    def lines(self) -> bytes: ...


def with_twins(
    page: RecordPage, names: tuple[str, ...], twin: Callable[[str], str], ui_amount_string: Callable[[int, int], str]
) -> bytes | None:
    """The page's lines with the twin of each amount in `names` (named `twin(name)`) beside it, as
    `amount_fields.adder` adds them (None: a nested amount, which records have no slot for)."""
    if any("." in name for name in names):
        return None
    records = page.records
    places = set(map(attrgetter("decimals"), records))
    for name in names:
        amounts = list(map(attrgetter(name), records))
        if len(places) == 1 and min(amounts) >= 0:
            units: Any = _units(amounts, next(iter(places)))
        else:
            units = [ui_amount_string(amount, record.decimals) for amount, record in zip(amounts, records, strict=True)]
        deque(map(setattr, records, repeat(twin(name)), units), maxlen=0)
    return page.lines()


def _units(amounts: list[int], places: int) -> Any:
    """`ui_amount_string(amount, places)` of each amount (all >= 0), in C loops: whole and fraction
    parts as `%d.%0<places>d`, then the fraction's trailing zeros (and a bare point) stripped."""
    if not places:
        return map(str, amounts)
    pattern = f"%d.%0{places}d"
    written = map(pattern.__mod__, map(divmod, amounts, repeat(10**places)))
    return map(str.rstrip, map(str.rstrip, written, repeat("0")), repeat("."))
