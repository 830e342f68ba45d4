"""Amounts a script can use: every record of the machine formats (JSON, NDJSON, CSV) carries `decimals`
and, beside each base-unit amount kept exact as the service sent it, its token-unit value as exact
decimal text under the name plus `_ui_amount_string` (as the RPC's `uiAmountString`; null when the
token's decimals are unknown). The service's own fields are never changed: these are added.

`earnings` records name their token by symbol and carry no decimals: a known token's are given, else null.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

# The base-unit amounts of each kind of record, a nested one as `outer.inner`.
AMOUNTS: dict[str, tuple[str, ...]] = {
    "positions": ("total_deposited_value", "total_position_value", "yield_earned"),
    "balances": ("total_balance", "yield_balance.funds", "yield_balance.amount_of_yield"),
    "earnings": ("position_value", "yield_earned"),
}

Record = dict[str, Any]


def twin(name: str) -> str:
    return name + "_ui_amount_string"  # tokens.UI_AMOUNT_SUFFIX, unimported: `yield --version` loads this module


def columns_with_amounts(kind: str, columns: Iterable[str]) -> tuple[str, ...]:
    """CSV columns with `decimals` (when missing) and each amount's twin right after it."""
    amounts = AMOUNTS.get(kind, ())
    out: list[str] = []
    for column in columns:
        out.append(column)
        if column in amounts:
            out.append(twin(column))
    if amounts and "decimals" not in out:
        out.insert(0, "decimals")
    return tuple(out)


def _ui(value: Any, decimals: Any, ui_amount_string: Callable[[int, int], str]) -> str | None:
    if type(decimals) is not int:
        return None
    if type(value) is int:
        return ui_amount_string(value, decimals)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():  # u128 amounts may come as text
        return ui_amount_string(int(value), decimals)
    return None


Plan = tuple[dict[str, str], dict[str, Any]]  # (amount -> its twin's name, nested object -> its plan)


def _plan(names: Iterable[str]) -> Plan:
    top = {name: twin(name) for name in names if "." not in name}
    outer = {name.partition(".")[0] for name in names if "." in name}
    nested = {o: _plan(n.partition(".")[2] for n in names if n.startswith(o + ".")) for o in outer}
    return top, nested


def _with_twins(record: Record, plan: Plan, decimals: Any, ui: Callable[[int, int], str]) -> Record:
    top, nested = plan
    out: Record = {}
    for key, value in record.items():
        out[key] = value
        name = top.get(key)
        if name is not None:
            out[name] = _ui(value, decimals, ui)
        elif key in nested and type(value) is dict:
            out[key] = _with_twins(value, nested[key], decimals, ui)
    return out


def adder(kind: str) -> Callable[[Record], Record] | None:
    """What adds `decimals` and the token-unit twins to a raw record of `kind` (None: a kind without amounts)."""
    names = AMOUNTS.get(kind)
    if names is None:
        return None
    from yieldcli.tokens import by_symbol, ui_amount_string

    plan = _plan(names)

    def add(record: Record) -> Record:
        if "decimals" in record:
            return _with_twins(record, plan, record["decimals"], ui_amount_string)
        symbol = record.get("base_asset")
        known = by_symbol(symbol) if isinstance(symbol, str) else None
        decimals = known.decimals if known else None
        return {"decimals": decimals, **_with_twins(record, plan, decimals, ui_amount_string)}

    return add


def add_amounts(result: Any) -> Any:
    """A page result whose raw records (entries, and pages when given) carry the amounts; the same object."""
    add = adder(result.kind)
    if add is None:
        return result
    entries = result.entries
    added: Iterable[tuple[Record, Any]] = ((add(raw), typed) for raw, typed in entries)
    result.entries = list(added) if isinstance(entries, list) else added
    if result.pages is not None:
        result.pages = _pages(result.kind, result.pages, add)
    return result


def _pages(kind: str, pages: Iterable[Any], add: Callable[[Record], Record]) -> Iterator[list[Record] | bytes]:
    """Each page's records with the amounts: a list of records, or, for a page read as records with
    slots for the twins (`amount_lines.RecordPage`), its lines of JSON with the twins in them."""
    for items in pages:
        if isinstance(items, list):
            yield [add(item) for item in items]
            continue
        from yieldcli.cli.render.amount_lines import with_twins
        from yieldcli.tokens import ui_amount_string

        lines = with_twins(items, AMOUNTS[kind], twin, ui_amount_string)
        if lines is None:
            from yieldcli.exact_json import loads

            yield [add(loads(line)) for line in items.lines().split(b"\n")[:-1]]
        else:
            yield lines
