"""The bytes of an SPL Token account, as tests put them on a chain or hand them to the guard."""

from __future__ import annotations

import struct

from solders.pubkey import Pubkey


def token_account_data(
    mint: object,
    owner: object,
    amount: int,
    *,
    delegate: object = None,
    delegated: int = 0,
    close: object = None,
    native: int | None = None,
) -> bytes:
    """165 bytes: mint, owner, amount, delegate, state (initialized), native rent, delegated, close authority.
    Keys are given as text or as solders Pubkeys."""

    def key(value: object) -> bytes:
        return bytes(value) if isinstance(value, Pubkey) else bytes(Pubkey.from_string(str(value)))

    def option_key(value: object) -> bytes:
        return struct.pack("<I", 1) + key(value) if value else bytes(36)

    native_part = struct.pack("<IQ", 1, native) if native is not None else bytes(12)
    return (
        key(mint)
        + key(owner)
        + struct.pack("<Q", amount)
        + option_key(delegate)
        + bytes([1])
        + native_part
        + struct.pack("<Q", delegated)
        + option_key(close)
    )
