"""The Address Lookup Table program."""

from __future__ import annotations

import struct

from yieldcli.chain.tx.decoders.common import DecodeContext, Decoded, pubkey_at


def decode_lookup_table(data: bytes, accts: list[str | None], ctx: DecodeContext, program_id: str) -> Decoded:
    (tag,) = struct.unpack_from("<I", data, 0)
    if tag == 0:
        recent_slot, bump = struct.unpack_from("<QB", data, 4)
        return (
            "createLookupTable",
            {"recent_slot": recent_slot, "bump": bump},
            ("lookupTable", "authority", "payer", "systemProgram"),
        )
    if tag == 1:
        return "freezeLookupTable", {}, ("lookupTable", "authority")
    if tag == 2:
        (count,) = struct.unpack_from("<Q", data, 4)
        keys = [pubkey_at(data, 12 + 32 * i) for i in range(count)]
        return "extendLookupTable", {"addresses": keys}, ("lookupTable", "authority", "payer", "systemProgram")
    if tag == 3:
        return "deactivateLookupTable", {}, ("lookupTable", "authority")
    if tag == 4:
        return "closeLookupTable", {}, ("lookupTable", "authority", "recipient")
    raise ValueError(tag)
