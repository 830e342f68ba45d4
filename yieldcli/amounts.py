"""Amount: a raw integer of base units plus the mint's decimals. Decimal only; no float touches money."""

from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple

from yieldcli import numbers
from yieldcli.errors import UsageError

U64_MAX = 2**64 - 1
_U64_DIGITS = len(str(U64_MAX))
_AMOUNT_HINT = "write the amount in token units with digits 0-9, for example 1.5 (no sign, no exponent)"


class Amount(NamedTuple):
    raw: int
    decimals: int

    @classmethod
    def parse(cls, text: str, decimals: int, *, name: str = "--amount") -> Amount:
        """Parse token units (`1.5`) into base units, refusing what is not exactly representable."""
        whole, fraction = split_decimal(text, name=name)
        if len(fraction) > decimals:
            raise UsageError(
                f"invalid value for {name}: {numbers.quoted(text)} has {len(fraction)} fraction digits "
                f"but the token has {decimals} decimals"
            )
        _refuse_past_u64(whole, text, name)
        raw = numbers.to_int(whole) * 10**decimals + numbers.to_int(fraction.ljust(decimals, "0"))
        return cls.from_raw(raw, decimals, name=name, shown=text)

    @staticmethod
    def check_syntax(text: str, *, raw: bool, name: str = "--amount") -> None:
        """Refuse malformed, negative or zero amounts before the mint's decimals are known."""
        if raw:
            Amount.parse_raw(text, 0, name=name)
            return
        whole, fraction = split_decimal(text, name=name)
        if numbers.significant_digits(whole) == 0 and numbers.significant_digits(fraction) == 0:
            raise UsageError(f"invalid value for {name}: {numbers.quoted(text)} must be greater than zero")

    @classmethod
    def parse_raw(cls, text: str, decimals: int, *, name: str = "--amount") -> Amount:
        """Parse base units (`--raw`): ASCII digits only."""
        digits = numbers.whole_digits(
            text,
            name=name,
            what="a whole number of base units",
            hint="with --raw, give the amount in base units with digits 0-9, for example 1500000",
        )
        _refuse_past_u64(digits, text, name)
        return cls.from_raw(numbers.to_int(digits), decimals, name=name, shown=text)

    @classmethod
    def from_raw(cls, raw: int, decimals: int, *, name: str = "--amount", shown: str | None = None) -> Amount:
        shown = numbers.quoted(str(raw) if shown is None else shown)
        if raw <= 0:
            raise UsageError(f"invalid value for {name}: {shown} must be greater than zero")
        if raw > U64_MAX:
            raise UsageError(
                f"invalid value for {name}: {shown} is more than the largest amount (u64) a token can hold"
            )
        return cls(raw, decimals)

    def to_decimal(self) -> Decimal:
        return scale(self.raw, self.decimals)

    def __str__(self) -> str:
        return format_units(self.raw, self.decimals)


def split_decimal(text: str, *, name: str = "--amount") -> tuple[str, str]:
    """Whole and fraction digits of plain decimal text; anything else (signs, exponents, non-ASCII digits)
    is refused."""
    return numbers.split_decimal(text, name=name, hint=_AMOUNT_HINT)


def _refuse_past_u64(whole: str, text: str, name: str) -> None:
    # Checked on the digits, before int(): Python refuses to convert more than 4300 digits.
    if numbers.significant_digits(whole) > _U64_DIGITS:
        raise UsageError(
            f"invalid value for {name}: {numbers.quoted(text)} is more than the largest amount (u64) a token can hold"
        )


def scale(raw: int, decimals: int) -> Decimal:
    """Base units to token units, exactly. Zero is `Decimal(0)`: scaled, it would print as `0E-9`."""
    if raw == 0:
        return Decimal(0)
    return Decimal(raw).scaleb(-decimals)


def format_units(raw: int, decimals: int, *, min_fraction: int = 2) -> str:
    """Token units as text: grouped thousands, trailing zeros trimmed to at least `min_fraction` digits."""
    sign = "-" if raw < 0 else ""
    whole, fraction = divmod(abs(raw), 10**decimals)
    frac = str(fraction).rjust(decimals, "0").rstrip("0") if decimals else ""
    frac = frac.ljust(min(min_fraction, decimals), "0")
    return f"{sign}{whole:,}" + (f".{frac}" if frac else "")
