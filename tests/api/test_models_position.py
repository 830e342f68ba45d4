"""models.position reads a well-formed item in one pass: the same Position, and the same error for
anything else, as the field-by-field checks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from yieldcli.api.models import Position, _checked_position, check_items, position
from yieldcli.exact_json import ReprFloat

FIELDS = {
    "token_address": st.sampled_from(["So11111111111111111111111111111111111111112", "é", None, 1]),
    "token_symbol": st.sampled_from(["USDC", None, "", 0]),
    "token_name": st.sampled_from(["USD Coin", None]),
    "decimals": st.sampled_from([0, 6, 255, 256, -1, True, "6", None]),
    "fund_id": st.sampled_from(["f", None]),
    "strategy_name": st.sampled_from(["s", None, 2]),
    "total_deposited_value": st.sampled_from([1, 2**100, "5", " 7", True, None, 1.0]),
    "total_position_value": st.sampled_from([0, -3, 2**128 - 1]),
    "yield_earned": st.sampled_from([7, None]),
    "apy": st.sampled_from([None, 1, 2.5, ReprFloat(1e-7), True, "1"]),
    "last_updated": st.sampled_from(["2025-06-02T12:00:00+00:00", None, 3]),
}


def outcome(read, item):
    try:
        return read(item, 4)
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return type(exc), str(exc)


@settings(max_examples=500, deadline=None)
@given(st.fixed_dictionaries({}, optional=FIELDS))
def test_the_one_pass_read_agrees_with_the_field_by_field_checks(item):
    fast, checked = outcome(position, item), outcome(_checked_position, item)
    assert fast == checked
    if isinstance(fast, Position):
        assert type(fast) is Position and [type(v) for v in fast] == [type(v) for v in checked]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.fixed_dictionaries({}, optional=FIELDS), max_size=4), st.integers(0, 500))
def test_a_page_checked_at_once_fails_as_its_items_read_one_by_one_do(items, start):
    """check_items (msgspec's converter on a well-formed page) accepts what position() accepts and
    raises position()'s own error, for the same item number, for anything else."""

    def one_by_one():
        for i, item in enumerate(items):
            position(item, start + i)

    assert outcome(lambda *_: check_items(position, items, start), None) == outcome(lambda *_: one_by_one(), None)
