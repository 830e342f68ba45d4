"""How the intent guard writes amounts and addresses: `10 USDC`, `0.000005 SOL`, `5PJ1…Vr9k`."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from yieldcli.amounts import scale
from yieldcli.tokens import by_mint


def short(address: str) -> str:
    return f"{address[:4]}…{address[-4:]}" if len(address) > 12 else address


def amount_text(raw: int, mint: str | None, decimals: Mapping[str, int]) -> str:
    """`10 USDC`, `0.000005 SOL` (mint None), or base units when the decimals are unknown."""
    if mint is None:
        return f"{plain(scale(raw, 9))} SOL"
    known = by_mint(mint)
    places = known.decimals if known else decimals.get(mint)
    name = known.symbol if known else short(mint)
    if places is None:
        return f"{raw} base units of {name}"
    return f"{plain(scale(raw, places))} {name}"


def plain(value: Decimal) -> str:
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def symbol(mint: str) -> str:
    known = by_mint(mint)
    return known.symbol if known else short(mint)


def signed(raw: int, mint: str | None, decimals: Mapping[str, int]) -> str:
    return ("−" if raw < 0 else "+") + amount_text(abs(raw), mint, decimals)
