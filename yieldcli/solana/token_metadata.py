"""A token's symbol and name as its own on-chain metadata gives them: Token-2022's token-metadata extension
in the mint itself (when the mint's metadata pointer names the mint), or the Metaplex metadata account of
an SPL Token mint (the program-derived address of "metadata", the Metaplex program and the mint).

Both lay strings out as a u32 length and the bytes; Metaplex pads the symbol and name with NULs. Parsing
is strict: a length past the end, a metadata account of another mint or another kind is no metadata.
"""

from __future__ import annotations

import struct

from solders.pubkey import Pubkey

from yieldcli.solana import token_layout

METAPLEX_PROGRAM = "metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s"
METAPLEX_METADATA_V1 = 4  # the account's first byte, Metaplex's `Key::MetadataV1`
METADATA_POINTER = token_layout.METADATA_POINTER
TOKEN_METADATA = 19  # Token-2022's `ExtensionType::TokenMetadata`


def metaplex_address(mint: str) -> str:
    """The Metaplex metadata account of `mint`."""
    program = Pubkey.from_string(METAPLEX_PROGRAM)
    seeds = [b"metadata", bytes(program), bytes(Pubkey.from_string(mint))]
    return str(Pubkey.find_program_address(seeds, program)[0])


def _strings(data: bytes, at: int, count: int) -> tuple[list[str], int] | None:
    """`count` u32-length-prefixed UTF-8 strings from `at`, and where they end; None when malformed."""
    found: list[str] = []
    for _ in range(count):
        if at + 4 > len(data):
            return None
        (length,) = struct.unpack_from("<I", data, at)
        if at + 4 + length > len(data):
            return None
        try:
            found.append(data[at + 4 : at + 4 + length].decode("utf-8"))
        except UnicodeDecodeError:
            return None
        at += 4 + length
    return found, at


def from_token_2022_mint(mint: str, data: bytes) -> tuple[str, str] | None:
    """(symbol, name) of a Token-2022 mint whose metadata pointer names the mint itself and whose
    token-metadata extension is for this mint; None otherwise (a pointer elsewhere is not followed)."""
    found = token_layout.extensions(data, token_layout.ACCOUNT_TYPE_MINT)
    if not found or METADATA_POINTER not in found or TOKEN_METADATA not in found:
        return None
    pointer = found[METADATA_POINTER]
    if len(pointer) != 64 or pointer[32:] != bytes(Pubkey.from_string(mint)):
        return None
    value = found[TOKEN_METADATA]
    if len(value) < 64 or value[32:64] != bytes(Pubkey.from_string(mint)):
        return None
    parsed = _strings(value, 64, 3)  # name, symbol, uri
    return None if parsed is None else (parsed[0][1], parsed[0][0])


def from_metaplex(mint: str, data: bytes) -> tuple[str, str] | None:
    """(symbol, name) of a Metaplex metadata account (its owner checked by the caller) for `mint`."""
    if len(data) < 65 or data[0] != METAPLEX_METADATA_V1 or data[33:65] != bytes(Pubkey.from_string(mint)):
        return None
    parsed = _strings(data, 65, 2)  # name, symbol
    return None if parsed is None else (parsed[0][1], parsed[0][0])


def _string(text: str, padded_to: int = 0) -> bytes:
    raw = text.encode("utf-8").ljust(padded_to, b"\x00")
    return struct.pack("<I", len(raw)) + raw


def token_2022_value(mint: str, update_authority: Pubkey, name: str, symbol: str, uri: str = "") -> bytes:
    """The token-metadata extension's value: update authority, mint, name, symbol, uri, no additional fields."""
    head = bytes(update_authority) + bytes(Pubkey.from_string(mint))
    return head + _string(name) + _string(symbol) + _string(uri) + struct.pack("<I", 0)


def metaplex_data(mint: str, update_authority: Pubkey, name: str, symbol: str, uri: str = "") -> bytes:
    """A Metaplex metadata account as the program writes one for a fungible token: name, symbol and uri
    padded to 32, 10 and 200 bytes; no creators, no edition nonce, token standard Fungible, nothing else."""
    strings = _string(name, 32) + _string(symbol, 10) + _string(uri, 200)
    rest = struct.pack("<H", 0) + bytes([0, 0, 1, 0, 1, 2, 0, 0, 0])  # fee, creators, sale, mutable, nonce, standard...
    return bytes([METAPLEX_METADATA_V1]) + bytes(update_authority) + bytes(Pubkey.from_string(mint)) + strings + rest
