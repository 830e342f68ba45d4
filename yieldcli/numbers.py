"""Numbers typed by users (flags, environment, config file): ASCII digits only, bounded, exact.

Python's int() and float() accept any Unicode digit (`١٢` is 12, `１０` is 10), underscores
(`1_0`), signs, exponents, `nan` and `inf`. A number that moves money or bounds a wait must
mean what its reader sees, so only plain ASCII decimal text is taken.
"""

from __future__ import annotations

import re
from decimal import Decimal

from yieldcli.errors import UsageError

# Plain decimal notation: no sign, no exponent, no underscores, no spaces inside. re.ASCII keeps
# [0-9] and the surrounding whitespace to ASCII.
_DECIMAL_TEXT = re.compile(r"([0-9]+)(?:\.([0-9]*))?|\.([0-9]+)", re.ASCII)
_WHOLE_TEXT = re.compile(r"[0-9]+", re.ASCII)
_ASCII_SPACE = " \t\r\n"

# A wait longer than a day is a typo; it also keeps socket and asyncio timeouts in range.
MAX_SECONDS = 86_400


def split_decimal(text: str, *, name: str, hint: str | None = None) -> tuple[str, str]:
    """Whole and fraction digits of plain decimal text (`1.5`, `7.`, `.5`); anything else is refused."""
    match = _DECIMAL_TEXT.fullmatch(text.strip(_ASCII_SPACE))
    if match is None:
        raise UsageError(f"invalid value for {name}: {quoted(text)} is not a plain positive decimal number", hint=hint)
    if match.group(1) is not None:
        return match.group(1), match.group(2) or ""
    return "0", match.group(3)


def whole_digits(
    text: str, *, name: str, what: str = "a whole number (digits 0-9 only)", hint: str | None = None
) -> str:
    """The digits of a plain whole number, surrounding ASCII spaces removed; anything else is refused."""
    digits = text.strip(_ASCII_SPACE)
    if not _WHOLE_TEXT.fullmatch(digits):
        raise UsageError(f"invalid value for {name}: {quoted(text)} is not {what}", hint=hint)
    return digits


def significant_digits(digits: str) -> int:
    """How many digits a whole number has without its leading zeros (0 for zero)."""
    return len(digits.lstrip("0"))


def to_int(digits: str) -> int:
    """int() of checked ASCII digits; leading zeros go first (int() refuses over 4300 digits)."""
    return int(digits.lstrip("0") or "0")


def parse_whole(text: str | int, *, name: str, minimum: int = 0, maximum: int) -> int:
    """A whole number from minimum to maximum, written with ASCII digits only."""
    if isinstance(text, int) and not isinstance(text, bool):  # a default, already a number
        value = text
    else:
        digits = whole_digits(str(text), name=name)
        if significant_digits(digits) > len(str(maximum)):
            raise UsageError(f"invalid value for {name}: {quoted(text)} is more than {maximum}")
        value = to_int(digits)
    if not minimum <= value <= maximum:
        raise UsageError(f"invalid value for {name}: {value} is not between {minimum} and {maximum}")
    return value


def parse_seconds(text: str | int | float, *, name: str, maximum: int = MAX_SECONDS) -> float:
    """A positive number of seconds, at most `maximum` (not money, so a float is the right type)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):  # a default, or a TOML number
        value = Decimal(str(text)) if text == text and abs(text) != float("inf") else Decimal(-1)
    else:
        whole, fraction = split_decimal(str(text), name=name, hint="give seconds as digits, for example 30 or 2.5")
        if significant_digits(whole) > len(str(maximum)):
            raise UsageError(f"invalid value for {name}: {quoted(text)} seconds is more than {maximum}")
        value = Decimal(f"{whole}.{fraction or '0'}")
    if not 0 < value <= maximum:
        raise UsageError(f"invalid value for {name}: {quoted(text)} must be more than 0 and at most {maximum} seconds")
    return float(value)


def quoted(text: object) -> str:
    """Quoted, and cut short: a 5,000-digit value (or a 16 MB line) is not worth echoing whole."""
    shown = repr(text if isinstance(text, str) else str(text))
    return shown if len(shown) <= 40 else shown[:30] + "…" + shown[-5:]
