"""How the intent guard writes amounts and addresses: `10 USDC`, `0.000005 SOL`, `5PJ1…Vr9k`."""

from __future__ import annotations

from collections.abc import Mapping

from yieldcli.amounts import format_units
from yieldcli.tokens import built_in, by_mint


def short(address: str) -> str:
    return f"{address[:4]}…{address[-4:]}" if len(address) > 12 else address


def amount_text(raw: int, mint: str | None, decimals: Mapping[str, int]) -> str:
    """`10 USDC`, `0.000005 SOL` (mint None), or base units when the decimals are unknown."""
    if mint is None:
        return f"{format_units(raw, 9, min_fraction=0)} SOL"
    # Named by a learned symbol too; counted with a built-in token's decimals or the mint as the check read it.
    known, shipped = by_mint(mint), built_in(mint)
    places = shipped.decimals if shipped else decimals.get(mint)
    name = known.symbol if known else short(mint)
    if places is None:
        return f"{raw} base units of {name}"
    return f"{format_units(raw, places, min_fraction=0)} {name}"


def symbol(mint: str) -> str:
    known = by_mint(mint)
    return known.symbol if known else short(mint)


def signed(raw: int, mint: str | None, decimals: Mapping[str, int]) -> str:
    # The minus sign the tables use too (amounts.format_units): one way to write an amount everywhere.
    return ("-" if raw < 0 else "+") + amount_text(abs(raw), mint, decimals)
