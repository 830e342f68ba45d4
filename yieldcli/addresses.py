"""Public keys in text form: base58 of 32 bytes, checked without importing solders (start-up time)."""

from __future__ import annotations

from yieldcli.errors import UsageError

_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_INDEX = {c: i for i, c in enumerate(_ALPHABET)}


def b58decode(text: str) -> bytes:
    number = 0
    for char in text:
        digit = _INDEX.get(char)
        if digit is None:
            raise ValueError(f"{char!r} is not a base58 character")
        number = number * 58 + digit
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    leading_zeros = len(text) - len(text.lstrip("1"))
    return b"\0" * leading_zeros + body


def b58encode(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    out = []
    while number:
        number, rem = divmod(number, 58)
        out.append(_ALPHABET[rem])
    leading_zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * leading_zeros + "".join(reversed(out))


def is_base58(text: str) -> bool:
    """Non-empty, and only base58 characters."""
    return bool(text) and all(c in _INDEX for c in text)


def is_pubkey(text: str) -> bool:
    if not 32 <= len(text) <= 44:
        return False
    try:
        return len(b58decode(text)) == 32
    except ValueError:
        return False


def check_pubkey(text: str, what: str) -> str:
    """Return `text` if it is a public key, else a UsageError naming the value and what it was for."""
    if not is_pubkey(text):
        raise UsageError(
            f"invalid {what}: {text!r} is not a Solana address (base58 text of 32 bytes)",
        )
    return text
