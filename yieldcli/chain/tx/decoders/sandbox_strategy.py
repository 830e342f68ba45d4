"""The sandbox strategy program (yieldcli/sandbox/program/): deposit, withdraw, close, with their amounts."""

from __future__ import annotations

import struct
from typing import Any

from yieldcli.chain.tx.decoders.common import DecodeContext, Decoded
from yieldcli.solana import strategy_program as sp

_PAYOUT = ("mint", "vault", "authority", "position", "tokenProgram")
_ROLES: dict[int, tuple[str, ...]] = {
    sp.INIT_VAULT: ("payer", "vault", "authority", "mint", "systemProgram", "tokenProgram"),
    sp.DEPOSIT: ("user", "payer", "source", "mint", "vault", "authority", "position", "systemProgram", "tokenProgram"),
    sp.WITHDRAW: ("user", "destination", *_PAYOUT),
    sp.CLOSE: ("user", "recipient", *_PAYOUT),
    sp.CREDIT_YIELD: ("yieldAuthority", "source", *_PAYOUT),
}
_DATA_SIZE = {sp.INIT_VAULT: 1, sp.DEPOSIT: 41, sp.WITHDRAW: 10, sp.CLOSE: 1, sp.CREDIT_YIELD: 9}


def decode_sandbox_strategy(data: bytes, accts: list[str | None], ctx: DecodeContext, program_id: str) -> Decoded:
    tag = data[0]
    if tag not in _ROLES or len(data) != _DATA_SIZE[tag]:
        raise ValueError(tag)
    roles = _ROLES[tag]
    role = {name: accts[i] if i < len(accts) else None for i, name in enumerate(roles)}
    details: dict[str, Any] = {name: role[name] for name in roles if not name.endswith("Program")}
    mint = role.get("mint")
    if tag in (sp.DEPOSIT, sp.WITHDRAW, sp.CREDIT_YIELD):
        (amount,) = struct.unpack_from("<Q", data, 1)
        if tag == sp.WITHDRAW and amount == sp.WITHDRAW_ALL and data[9] == sp.MODE_GROSS:
            details["all"] = True
        else:
            ctx.amount(details, amount, mint=mint)
    if tag == sp.DEPOSIT:
        details["strategy_key"] = data[9:41].hex()
    elif tag == sp.WITHDRAW:
        if data[9] not in (sp.MODE_GROSS, sp.MODE_EXCLUDE_FEES):
            raise ValueError("unknown withdrawal mode")
        details["exclude_fees"] = data[9] == sp.MODE_EXCLUDE_FEES
    return sp.INSTRUCTION_NAMES[tag], details, roles
