"""Amount: a raw integer of base units plus the mint's decimals. Decimal only; no float touches money."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import NamedTuple

from yieldcli.errors import UsageError

U64_MAX = 2**64 - 1

# Plain decimal notation only: no sign, no exponent, no underscores, no spaces.
_DECIMAL_TEXT = re.compile(r"^(\d+)(?:\.(\d*))?$|^\.(\d+)$")


class Amount(NamedTuple):
    raw: int
    decimals: int

    @classmethod
    def parse(cls, text: str, decimals: int, *, name: str = "--amount") -> "Amount":
        """Parse token units (`1.5`) into base units, refusing what is not exactly representable."""
        whole, fraction = split_decimal(text, name=name)
        if len(fraction) > decimals:
            raise UsageError(
                f"invalid value for {name}: {text!r} has {len(fraction)} fraction digits but the token has {decimals} decimals"
            )
        raw = int(whole) * 10**decimals + int((fraction or "0").ljust(decimals, "0") or "0")
        return cls.from_raw(raw, decimals, name=name, shown=text)

    @staticmethod
    def check_syntax(text: str, *, raw: bool, name: str = "--amount") -> None:
        """Refuse malformed, negative or zero amounts before the mint's decimals are known."""
        if raw:
            Amount.parse_raw(text, 0, name=name)
            return
        whole, fraction = split_decimal(text, name=name)
        if int(whole) == 0 and int(fraction or "0") == 0:
            raise UsageError(f"invalid value for {name}: {text!r} must be greater than zero")

    @classmethod
    def parse_raw(cls, text: str, decimals: int, *, name: str = "--amount") -> "Amount":
        """Parse base units (`--raw`)."""
        if not re.fullmatch(r"\d+", text.strip()):
            raise UsageError(f"invalid value for {name}: {text!r} is not a whole number of base units")
        return cls.from_raw(int(text.strip()), decimals, name=name, shown=text)

    @classmethod
    def from_raw(cls, raw: int, decimals: int, *, name: str = "--amount", shown: str | None = None) -> "Amount":
        shown = str(raw) if shown is None else shown
        if raw <= 0:
            raise UsageError(f"invalid value for {name}: {shown!r} must be greater than zero")
        if raw > U64_MAX:
            raise UsageError(f"invalid value for {name}: {shown!r} is more than the largest amount (u64) a token can hold")
        return cls(raw, decimals)

    def to_decimal(self) -> Decimal:
        return scale(self.raw, self.decimals)

    def __str__(self) -> str:
        return format_units(self.raw, self.decimals)


def split_decimal(text: str, *, name: str = "--amount") -> tuple[str, str]:
    """Whole and fraction digits of plain decimal text; anything else (signs, exponents) is refused."""
    match = _DECIMAL_TEXT.match(text.strip())
    if match is None:
        raise UsageError(
            f"invalid value for {name}: {text!r} is not a plain positive decimal number",
            hint="write the amount in token units, for example 1.5 (no sign, no exponent)",
        )
    if match.group(1) is not None:
        return match.group(1), match.group(2) or ""
    return "0", match.group(3)


def scale(raw: int, decimals: int) -> Decimal:
    """Base units to token units, exactly."""
    return Decimal(raw).scaleb(-decimals)


def format_units(raw: int, decimals: int, *, min_fraction: int = 2) -> str:
    """Token units as text: grouped thousands, trailing zeros trimmed to at least `min_fraction` digits."""
    sign = "-" if raw < 0 else ""
    whole, fraction = divmod(abs(raw), 10**decimals)
    frac = str(fraction).rjust(decimals, "0").rstrip("0") if decimals else ""
    frac = frac.ljust(min(min_fraction, decimals), "0")
    return f"{sign}{whole:,}" + (f".{frac}" if frac else "")
