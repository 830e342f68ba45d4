"""The tokens the service supports (facts.md): symbol, mint and decimals; and those learned from the chain.

A token the strategy lists that is not built in is known by the symbol and name in its own on-chain
metadata once read in this process (`yieldcli.chain.token_names`, which calls `learn`), with the
decimals of its mint account. A learned symbol never takes a built-in one's place (a token may call
itself "USDC"), nor one already learned for another mint.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
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


# Learned in this process from the chain's metadata of listed mints (`learn`), to show them by name:
# mint -> token, and lower symbol -> token. Never what a symbol given by the user is resolved with: that
# is the strategy's listing read again on the client's own chain (`client.listed_tokens.resolve_listed`).
_LEARNED_BY_MINT: dict[str, Token] = {}
_LEARNED_BY_SYMBOL: dict[str, Token] = {}

# What a learned symbol may be: letters, digits and a few marks, as token symbols are written; anything
# else (spaces, controls, look-alike letters of other scripts) would let a name pass for another.
_SYMBOL_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9$._-]{0,11}")
_NAME_SHAPE = re.compile(r"[ -~]{1,40}")  # printable ASCII; the name is only shown
# Symbols that read alike are one symbol: digits that pass for letters, Cyrillic and Greek letters that
# pass for Latin ones (after NFKC has folded full-width forms), letter pairs that pass for one, no marks.
_READS_AS = str.maketrans(
    {"0": "o", "1": "l", "i": "l", "5": "s", "$": "s", "8": "b", "2": "z", "6": "g"}
    | dict(zip("авсеһіјкмнорѕтухьԁԛԝ", "abcehijkmhopstyxbdqw", strict=True))  # Cyrillic, lower-cased
    | dict(zip("αβεζηικμνορτυχ", "abezhikmnoptux", strict=True))  # Greek, lower-cased
)


def skeleton(symbol: str) -> str:
    """What `symbol` reads as: `JitoS0L`, `U5DC`, `USDC.`, `rnSOL`, `ＵＳＤＣ` and `USDС` (a Cyrillic С)
    read as `JitoSOL`, `USDC`, `USDC`, `mSOL`, `USDC` and `USDC` do."""
    folded = unicodedata.normalize("NFKC", symbol).lower().translate(_READS_AS)
    folded = folded.replace("rn", "m").replace("vv", "w").replace("cl", "d")
    return "".join(ch for ch in folded if ch.isalnum() or ch in "$").translate(_READS_AS)


_BUILT_IN_SKELETONS = {skeleton(symbol): token for symbol, token in _BY_SYMBOL.items()}


def by_mint(mint: str) -> Token | None:
    return _BY_MINT.get(mint) or _LEARNED_BY_MINT.get(mint)


def built_in(mint: str) -> Token | None:
    """A token the code ships with (never a learned one): what a decision may take the decimals of
    without reading the mint."""
    return _BY_MINT.get(mint)


def passes_for_built_in(symbol: str, mint: str) -> bool:
    """Whether `symbol` reads as a built-in token's though `mint` is not that token's (a service's or a
    token's own word that would show another mint as USDC)."""
    shipped = _BUILT_IN_SKELETONS.get(skeleton(symbol))
    return shipped is not None and shipped.mint != mint


def shown_symbol(mint: str, reported: str | None) -> str | None:
    """The symbol to show for `mint` beside what a service reported: a built-in or learned mint's own,
    whatever it was called; none (show the address) for a reported symbol that reads as a built-in
    token's or a learned one's on another mint, or that is not ASCII once NFKC-folded (letters of other
    scripts pass for Latin ones in more ways than any table lists); else the reported one."""
    own = _BY_MINT.get(mint) or _LEARNED_BY_MINT.get(mint)
    if own is not None:
        return own.symbol
    if not reported or not unicodedata.normalize("NFKC", reported).isascii() or passes_for_built_in(reported, mint):
        return None
    read_as = skeleton(reported)
    taken = any(skeleton(t.symbol) == read_as for t in _LEARNED_BY_MINT.values())
    return None if taken else reported


def by_symbol(symbol: str) -> Token | None:
    return _BY_SYMBOL.get(symbol.lower()) or _LEARNED_BY_SYMBOL.get(symbol.lower())


def symbols(listed: Sequence[Token] = ()) -> list[str]:
    """The built-in symbols, then those of `listed` (a strategy's tokens as just read)."""
    return [t.symbol for t in (*KNOWN_TOKENS, *TOKEN_2022_KNOWN, *listed)]


def forget_learned() -> None:
    """Know only the built-in tokens again (a process serving many profiles or chains, and tests)."""
    _LEARNED_BY_MINT.clear()
    _LEARNED_BY_SYMBOL.clear()


def learnable(symbol: str, name: str) -> tuple[str, str] | None:
    """The symbol and name as a learned token may carry them (padding stripped), or None when the
    symbol is not of a symbol's shape. A name of another shape is replaced by the symbol."""
    symbol, name = symbol.strip("\x00 "), name.strip("\x00 ")
    if not _SYMBOL_SHAPE.fullmatch(symbol):
        return None
    return symbol, name if _NAME_SHAPE.fullmatch(name) else symbol


def candidate(mint: str, symbol: str, name: str, decimals: int) -> Token | None:
    """`mint` as its own metadata names it, or None: a built-in mint, a symbol not of a symbol's shape,
    or one that reads as a built-in token's (`U5DC`, `JitoS0L`, `usdc.`)."""
    shaped = learnable(symbol, name)
    if mint in _BY_MINT or shaped is None or not 0 <= decimals <= 255 or skeleton(shaped[0]) in _BUILT_IN_SKELETONS:
        return None
    return Token(shaped[0], mint, decimals, shaped[1])


def learn(mint: str, symbol: str, name: str, decimals: int) -> Token | None:
    """Show `mint` by `symbol` from now on (`by_mint`, tables, reviews, completion), unless `candidate`
    refuses it or another learned mint reads the same: the token learned, or None."""
    token = candidate(mint, symbol, name, decimals)
    if token is None:
        return None
    key = token.symbol.lower()
    taken = [t for t in _LEARNED_BY_MINT.values() if t.mint != mint and skeleton(t.symbol) == skeleton(key)]
    if taken:
        return None
    stale = _LEARNED_BY_MINT.get(mint)
    if stale is not None:
        _LEARNED_BY_SYMBOL.pop(stale.symbol.lower(), None)
    _LEARNED_BY_MINT[mint] = token
    _LEARNED_BY_SYMBOL[key] = token
    return token


def resolve_asset(value: str, flag: str = "--asset", listed: Sequence[Token] = ()) -> str:
    """A built-in symbol, a symbol of `listed` (the strategy's tokens as just read on the client's chain)
    or a mint address, as a mint address; anything else names the bad value and the known symbols."""
    known = _BY_SYMBOL.get(value.lower()) or next((t for t in listed if t.symbol.lower() == value.lower()), None)
    if known:
        return known.mint
    if is_pubkey(value):
        return value
    raise UsageError(
        f"invalid {flag} {value!r}: not a known symbol or a mint address",
        hint="known symbols: " + ", ".join(symbols(listed)),
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
