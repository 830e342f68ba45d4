"""A token's symbol and name from its own metadata: Token-2022's extension in the mint (only when the mint's
metadata pointer names the mint) and a Metaplex metadata account, each parsed strictly."""

from __future__ import annotations

import struct

from solders.keypair import Keypair
from solders.pubkey import Pubkey

from yieldcli.solana import token_layout, token_metadata

MINT = str(Keypair().pubkey())
OTHER = str(Keypair().pubkey())
ISSUER = Keypair().pubkey()


def mint_2022(pointer_to: str, metadata_of: str = MINT, symbol: str = "SDX") -> bytes:
    value = token_metadata.token_2022_value(metadata_of, ISSUER, "Sandbox Dollar", symbol, "https://x")
    pointer = (token_layout.METADATA_POINTER, bytes(ISSUER) + bytes(Pubkey.from_string(pointer_to)))
    return token_layout.mint_data(6, authority=ISSUER, extra=[pointer, (token_metadata.TOKEN_METADATA, value)])


def test_a_token_2022_mint_names_itself():
    assert token_metadata.from_token_2022_mint(MINT, mint_2022(MINT)) == ("SDX", "Sandbox Dollar")


def test_a_pointer_elsewhere_or_metadata_of_another_mint_is_no_name():
    assert token_metadata.from_token_2022_mint(MINT, mint_2022(OTHER)) is None
    assert token_metadata.from_token_2022_mint(MINT, mint_2022(MINT, metadata_of=OTHER)) is None
    bare = token_layout.mint_data(6, authority=ISSUER)
    assert token_metadata.from_token_2022_mint(MINT, bare) is None


def test_a_length_past_the_end_is_no_name():
    data = bytearray(mint_2022(MINT))
    at = bytes(data).index(struct.pack("<I", len("Sandbox Dollar")) + b"Sandbox Dollar")
    data[at : at + 4] = struct.pack("<I", 10_000)
    assert token_metadata.from_token_2022_mint(MINT, bytes(data)) is None


def test_a_metaplex_account_pads_with_nuls_and_names_its_mint():
    data = token_metadata.metaplex_data(MINT, ISSUER, "Sandbox Bond", "SBOND")
    symbol, name = token_metadata.from_metaplex(MINT, data)
    assert (symbol.rstrip("\x00"), name.rstrip("\x00")) == ("SBOND", "Sandbox Bond")
    assert token_metadata.from_metaplex(OTHER, data) is None  # another mint's account
    assert token_metadata.from_metaplex(MINT, b"\x05" + data[1:]) is None  # not MetadataV1
    assert token_metadata.from_metaplex(MINT, data[:80]) is None  # cut short


def test_the_metaplex_address_is_the_programs_derivation():
    # The USDC metadata account as explorers show it.
    usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    assert token_metadata.metaplex_address(usdc) == "5x38Kp4hvdomTCnCrAny4UtMUt5rQBdB6px2K1Ui45Wq"
