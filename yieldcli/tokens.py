"""The tokens the service supports (facts.md): symbol, mint and decimals."""

from __future__ import annotations

from typing import NamedTuple

from yieldcli.addresses import is_pubkey
from yieldcli.errors import UsageError


class Token(NamedTuple):
    symbol: str
    mint: str
    decimals: int
    name: str


KNOWN_TOKENS: tuple[Token, ...] = (
    Token("USDC", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 6, "USD Coin"),
    Token("USDT", "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB", 6, "Tether USD"),
    Token("USDS", "USDSwr9ApdHk5bvJKMjzff41FfuX8bSxdKcR81vTwcA", 6, "USDS"),
    Token("SOL", "So11111111111111111111111111111111111111112", 9, "Wrapped SOL"),
    Token("JitoSOL", "J1toso1uCk3RLmjorhTtrVwY9HJ7X8V9yYac6Y7kGCPn", 9, "Jito Staked SOL"),
    Token("mSOL", "mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So", 9, "Marinade staked SOL"),
    Token("JupSOL", "jupSoLaHXQiZZTSfEWMTRRgpnyFm8f6sZdosWBjx93v", 9, "Jupiter Staked SOL"),
    Token("JLP", "27G8MtK7VtTcCHkpASjSDdkWWYfoqT6ggEuKidVJidD4", 6, "Jupiter Perps LP"),
)

# Base assets the service lists on the Token-2022 program (facts.md): known by symbol everywhere (`--asset`,
# completion, tables, reviews) as the others are; apart, because the sandbox makes KNOWN_TOKENS' mints on
# the Token program and these on Token-2022.
TOKEN_2022_KNOWN: tuple[Token, ...] = (Token("PYUSD", "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo", 6, "PayPal USD"),)

# /user-balances reports native SOL under this pseudo address (facts.md).
NATIVE_SOL_PSEUDO_MINT = "11111111111111111111111111111112"
NATIVE_SOL = Token("SOL", NATIVE_SOL_PSEUDO_MINT, 9, "Solana")

WSOL_MINT = "So11111111111111111111111111111111111111112"
STRATEGY_PROGRAM_ID = "brzp8fNvHCBRi8UcCnTQUgQ2bQ4JnJTJtCvPzpKf2ty"

_BY_MINT = {t.mint: t for t in (*KNOWN_TOKENS, *TOKEN_2022_KNOWN, NATIVE_SOL)}
_BY_SYMBOL = {t.symbol.lower(): t for t in (*KNOWN_TOKENS, *TOKEN_2022_KNOWN)}
# People type WSOL too.
_BY_SYMBOL["wsol"] = _BY_SYMBOL["sol"]


def by_mint(mint: str) -> Token | None:
    return _BY_MINT.get(mint)


def by_symbol(symbol: str) -> Token | None:
    return _BY_SYMBOL.get(symbol.lower())


def symbols() -> list[str]:
    return [t.symbol for t in (*KNOWN_TOKENS, *TOKEN_2022_KNOWN)]


def resolve_asset(value: str, flag: str = "--asset") -> str:
    """A known symbol or a mint address, as a mint address; anything else names the bad value."""
    known = by_symbol(value)
    if known:
        return known.mint
    if is_pubkey(value):
        return value
    raise UsageError(
        f"invalid {flag} {value!r}: not a known symbol or a mint address",
        hint="known symbols: " + ", ".join(symbols()),
    )


# Beside each base-unit amount a record carries its token-unit value under this suffix: exact decimal
# text, as the RPC's `uiAmountString` (`total_position_value_ui_amount_string`).
UI_AMOUNT_SUFFIX = "_ui_amount_string"


def ui_amount_string(raw: int, decimals: int) -> str:
    """Base units as token units, exactly, as text with no trailing zeros and no exponent (as the RPC's
    `uiAmountString`): 16_000_000 at 6 decimals is "16", 1_500_000 is "1.5", -5 at 2 is "-0.05"."""
    digits = str(abs(raw))
    if decimals:
        digits = digits.rjust(decimals + 1, "0")
        whole, fraction = digits[:-decimals], digits[-decimals:].rstrip("0")
        digits = f"{whole}.{fraction}" if fraction else whole
    return f"-{digits}" if raw < 0 else digits
