"""exact_json writes the stdlib's bytes for whatever the service sends, faster."""

from __future__ import annotations

import json
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from yieldcli.exact_json import _SEPARATOR, LARGE_BODY, dumps_line, dumps_lines, loads, utf8_lines

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


def stdlib_lines(values) -> str:
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values)


# Objects as the service sends them, with now and then the text that separates objects when a page
# is encoded at once: inside a value it must not split an object.
page_objects = st.lists(
    st.dictionaries(st.text(max_size=8), json_values | st.just(_SEPARATOR) | st.just([0, _SEPARATOR, 1])),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(page_objects)
def test_a_page_of_lines_is_the_stdlib_s_lines(objects):
    content = json.dumps({"data": objects, "pad": "x" * LARGE_BODY}, ensure_ascii=False).encode(
        "utf-8", "surrogatepass"
    )
    decoded = loads(content)["data"]
    expected = stdlib_lines(json.loads(content)["data"])
    assert dumps_lines(decoded) == expected
    encoded = utf8_lines(decoded)
    if encoded is not None:  # None only when a lone surrogate (or the separator inside) needs the slow path
        assert encoded == expected.encode("utf-8")


def test_the_separator_inside_an_object_does_not_split_it():
    objects = [{"a": _SEPARATOR}, {"b": [1, _SEPARATOR, 2], "c": 2**128 - 1}, {"d": 1e-05}]
    content = json.dumps({"data": objects}).encode()
    assert dumps_lines(loads(content)["data"]) == stdlib_lines(json.loads(content)["data"])
    assert utf8_lines(loads(content)["data"]) is None  # seen: each object is then written on its own
    assert utf8_lines(loads(content)["data"][::2]) == stdlib_lines(json.loads(content)["data"][::2]).encode()
    assert utf8_lines([{"x": 1}, {"y": "é"}]) == '{"x": 1}\n{"y": "é"}\n'.encode()
