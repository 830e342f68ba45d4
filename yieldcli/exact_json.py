"""JSON for pages of the service's answers, at memory speed, with exactly the bytes the stdlib gives.

msgspec decodes and encodes in C, an order of magnitude faster than the stdlib per item, and keeps
integers of any size exact (u128 amounts stay ints; orjson would make them floats, and is never
used). Its text differs from `json.dumps(ensure_ascii=False)` only in the spaces after separators
(`msgspec.json.format` puts them back) and in floats written with an exponent or not finite
(1e-05, 1e+22, NaN): the decoder marks those as `ReprFloat`, whose text is the stdlib's. Small bodies
are read by the stdlib with the same marks, so whichever decoder read a value, `dumps_line` writes
what `json.dumps` would have. msgspec is imported only when a large body or a page line needs it.
"""

from __future__ import annotations

import json
from typing import Any

LARGE_BODY = 4096  # bytes: below this the stdlib is as fast, and msgspec's import is not paid


class ReprFloat(float):
    """A float whose JSON text is the stdlib's (exponent form, NaN, Infinity)."""


def _float(text: str) -> float:
    value = float(text)
    # repr writes an exponent exactly when the value is outside [1e-4, 1e16) (0 aside), and NaN and
    # Infinity fail both tests: a comparison instead of a repr per float.
    if 1e-4 <= abs(value) < 1e16 or value == 0:
        return value
    return ReprFloat(value)


def _constant(name: str) -> float:
    return ReprFloat(float(name))  # NaN, Infinity, -Infinity, as the stdlib accepts them


def loads(content: bytes) -> Any:
    """`json.loads(content)`, the same values (floats that print differently marked as ReprFloat)."""
    if len(content) >= LARGE_BODY:
        import msgspec

        try:
            return _decoder().decode(content)
        except msgspec.DecodeError:
            pass  # what msgspec refuses (NaN, another encoding, ...) is the stdlib's to accept or refuse
    return json.loads(content, parse_float=_float, parse_constant=_constant)


def make_ready() -> None:
    """Import and build what decoding a large body needs, ahead of the first one: for a caller with
    time to spare now (waiting on the network) that would otherwise spend it when the body comes."""
    _decoder()


def dumps_lines(values: list[dict[str, Any]]) -> str:
    """`"".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values)`, byte for byte."""
    encoded = utf8_lines(values)
    return "".join(dumps_line(v) + "\n" for v in values) if encoded is None else encoded.decode("utf-8")


def utf8_lines(values: list[dict[str, Any]]) -> bytes | None:
    """`dumps_lines(values)` encoded in UTF-8, from two C calls for the whole list (not two an object),
    or None when that cannot be done exactly: then `dumps_lines` writes each object on its own.

    The list is encoded with a separator string between the objects and split where it is. That is
    exact when the split gives just `len(values)` pieces: no match of the separator's text can
    straddle an object's closing brace, so any other match would be inside an object and make more.
    msgspec refuses what UTF-8 cannot hold (a lone surrogate), so these bytes never differ from what
    a UTF-8 stream would make of `dumps_lines`' text.
    """
    if not values:
        return b""
    if not all(type(v) is dict for v in values):
        return None
    import msgspec

    spaced: list[Any] = [_SEPARATOR] * (2 * len(values) - 1)
    spaced[::2] = values
    try:
        text: bytes = msgspec.json.format(_encoder().encode(spaced), indent=0)
    except (msgspec.MsgspecError, TypeError, UnicodeError):
        return None
    lines = text[1:-1].split(_separator_text())
    if len(lines) != len(values):
        return None
    lines.append(b"")
    return b"\n".join(lines)


# Between objects when a list of them is encoded at once; a string (so never inside a brace pair of
# ours) no service data is expected to hold. When it does, the count of pieces above sees it.
_SEPARATOR = "\u0000yield line break\u0000"


def dumps_line(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False)`, byte for byte, for a value `loads` decoded."""
    import msgspec

    try:
        text: str = msgspec.json.format(_encoder().encode(value), indent=0).decode("utf-8")
        return text
    except (msgspec.MsgspecError, TypeError, UnicodeError):
        return json.dumps(value, ensure_ascii=False)  # a lone surrogate, a type JSON has not: the stdlib's answer


_cache: dict[str, Any] = {}


def _decoder() -> Any:
    if "decoder" not in _cache:
        import msgspec

        _cache["decoder"] = msgspec.json.Decoder(float_hook=_float)
    return _cache["decoder"]


def _separator_text() -> bytes:
    if "separator" not in _cache:
        import msgspec

        _cache["separator"] = b", " + msgspec.json.encode(_SEPARATOR) + b", "
    return bytes(_cache["separator"])


def _encoder() -> Any:
    if "encoder" not in _cache:
        import msgspec

        def as_stdlib(obj: Any) -> Any:
            if isinstance(obj, float):
                return msgspec.Raw(json.dumps(float(obj)).encode())
            raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")

        _cache["encoder"] = msgspec.json.Encoder(enc_hook=as_stdlib)
    return _cache["encoder"]
