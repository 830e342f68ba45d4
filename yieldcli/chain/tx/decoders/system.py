"""The System Program: transfers, account creation, durable nonces."""

from __future__ import annotations

import struct
from typing import Any

from yieldcli.chain.tx.decoders.common import DecodeContext, Decoded, pubkey_at, sol_text

_SYSTEM_KINDS = {
    0: "createAccount",
    1: "assign",
    2: "transfer",
    3: "createAccountWithSeed",
    4: "advanceNonceAccount",
    5: "withdrawNonceAccount",
    6: "initializeNonceAccount",
    7: "authorizeNonceAccount",
    8: "allocate",
    9: "allocateWithSeed",
    10: "assignWithSeed",
    11: "transferWithSeed",
    12: "upgradeNonceAccount",
}


def decode_system(data: bytes, accts: list[str | None], ctx: DecodeContext, program_id: str) -> Decoded:
    (tag,) = struct.unpack_from("<I", data, 0)
    kind = _SYSTEM_KINDS.get(tag)
    if kind is None:
        raise ValueError(tag)
    details: dict[str, Any] = {}
    roles: tuple[str, ...] = ()
    if tag == 0:
        lamports, space = struct.unpack_from("<QQ", data, 4)
        details = {"lamports": lamports, "sol": sol_text(lamports), "space": space, "owner": pubkey_at(data, 20)}
        roles = ("funding", "newAccount")
    elif tag == 1:
        details = {"owner": pubkey_at(data, 4)}
        roles = ("account",)
    elif tag == 2:
        (lamports,) = struct.unpack_from("<Q", data, 4)
        details = {"lamports": lamports, "sol": sol_text(lamports)}
        roles = ("source", "destination")
    elif tag == 3:
        base = pubkey_at(data, 4)
        (seed_len,) = struct.unpack_from("<Q", data, 36)
        seed = data[44 : 44 + seed_len].decode("utf-8")
        lamports, space = struct.unpack_from("<QQ", data, 44 + seed_len)
        owner = pubkey_at(data, 60 + seed_len)
        details = {
            "base": base,
            "seed": seed,
            "lamports": lamports,
            "sol": sol_text(lamports),
            "space": space,
            "owner": owner,
        }
        roles = ("funding", "newAccount", "base")
    elif tag == 4:
        roles = ("nonceAccount", "recentBlockhashesSysvar", "nonceAuthority")
    elif tag == 8:
        (space,) = struct.unpack_from("<Q", data, 4)
        details = {"space": space}
        roles = ("account",)
    elif tag == 11:
        (lamports,) = struct.unpack_from("<Q", data, 4)
        details = {"lamports": lamports, "sol": sol_text(lamports)}
        roles = ("source", "base", "destination")
    return kind, details, roles


# tag -> (kind, account roles)
