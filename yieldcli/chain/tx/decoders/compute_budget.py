"""The Compute Budget program: the unit limit and the priority fee."""

from __future__ import annotations

import struct

from yieldcli.chain.tx.decoders.common import DecodeContext, Decoded


def decode_compute_budget(data: bytes, accts: list[str | None], ctx: DecodeContext, program_id: str) -> Decoded:
    tag = data[0]
    if tag == 1:
        (size,) = struct.unpack_from("<I", data, 1)
        return "requestHeapFrame", {"bytes": size}, ()
    if tag == 2:
        (units,) = struct.unpack_from("<I", data, 1)
        return "setComputeUnitLimit", {"units": units}, ()
    if tag == 3:
        (price,) = struct.unpack_from("<Q", data, 1)
        return "setComputeUnitPrice", {"micro_lamports": price}, ()
    if tag == 4:
        (limit,) = struct.unpack_from("<I", data, 1)
        return "setLoadedAccountsDataSizeLimit", {"bytes": limit}, ()
    raise ValueError(tag)
