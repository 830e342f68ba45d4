"""The Associated Token Account program: creating a wallet's token account."""

from __future__ import annotations

from solders.pubkey import Pubkey

from yieldcli.chain.tx.decoders.common import DecodeContext, Decoded
from yieldcli.solana import programs

_ATA_ROLES = ("payer", "associatedAccount", "wallet", "mint", "systemProgram", "tokenProgram")


def decode_associated_token(data: bytes, accts: list[str | None], ctx: DecodeContext, program_id: str) -> Decoded:
    tag = data[0] if data else 0
    if tag == 2:
        return (
            "recoverNested",
            {},
            ("nestedAccount", "nestedMint", "destination", "ownerAccount", "ownerMint", "wallet", "tokenProgram"),
        )
    if tag not in (0, 1) or len(data) > 1:
        raise ValueError(tag)
    # Not strict: a short account list leaves roles unnamed, and the legacy form adds the rent sysvar.
    role = dict(zip(_ATA_ROLES, accts, strict=False))
    details = {k: role.get(k) for k in ("payer", "associatedAccount", "wallet", "mint", "tokenProgram")}
    wallet, mint, token_program = details["wallet"], details["mint"], details["tokenProgram"]
    if details["associatedAccount"] and wallet and mint and token_program:
        expected = programs.associated_token_address(
            Pubkey.from_string(wallet), Pubkey.from_string(mint), Pubkey.from_string(token_program)
        )
        if str(expected) != details["associatedAccount"]:
            ctx.warnings.append(
                f"associated token account {details['associatedAccount']} is not the one derived "
                f"for wallet {details['wallet']} and mint {details['mint']}"
            )
    return ("createIdempotent" if tag == 1 else "create"), details, _ATA_ROLES
