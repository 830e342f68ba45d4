"""exact_json writes the stdlib's bytes for whatever the service sends, faster."""

from __future__ import annotations

import json
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from yieldcli.exact_json import LARGE_BODY, dumps_line, loads

U128_MAX = 2**128 - 1

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-U128_MAX, max_value=U128_MAX)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def stdlib_line(content: bytes) -> str:
    return json.dumps(json.loads(content), ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans())
def test_any_json_is_written_back_as_the_stdlib_writes_it(value, large):
    text = json.dumps({"v": value, "pad": "x" * (LARGE_BODY if large else 0)}, ensure_ascii=False)
    content = text.encode("utf-8", "surrogatepass")
    assert dumps_line(loads(content)) == stdlib_line(content)


def test_u128_amounts_non_ascii_and_float_forms_byte_for_byte():
    item = (
        '{"amount": 340282366920938463463374607431768211455, "neg": -340282366920938463463374607431768211455, '
        '"name": "Caf\\u00e9 \u6f22\u5b57 \U0001f600 \\u0001\\u2028", "apy": 1e-05, "big": 1e+22, "tiny": 5e-324, '
        '"odd": [NaN, Infinity, -0.0, 0.1]}'
    )
    for pad in ("", " " * LARGE_BODY):  # the stdlib's reader and msgspec's
        content = (item[:-1] + f', "pad": "{pad}"}}').encode()
        decoded = loads(content)
        assert decoded["amount"] == 2**128 - 1 and type(decoded["amount"]) is int
        assert dumps_line(decoded) == stdlib_line(content)


def test_importing_the_module_does_not_load_msgspec():
    import subprocess

    code = "import yieldcli.exact_json, yieldcli.api.core, sys; print('msgspec' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
