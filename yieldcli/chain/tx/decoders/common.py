"""What every instruction decoder shares: the context amounts are read in, and byte readers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from solders.pubkey import Pubkey

from yieldcli.amounts import scale

# (instruction kind, details, the role of each account in order); raises struct.error, IndexError
# or ValueError on data that is no instruction of the program.
Decoded = tuple[str | None, dict[str, Any], tuple[str, ...]]
Decoder = Callable[[bytes, list[str | None], "DecodeContext", str], Decoded]


@dataclass
class DecodeContext:
    decimals: dict[str, int]
    account_mints: dict[str, str]
    warnings: list[str]

    def amount(
        self,
        details: dict[str, Any],
        raw: int,
        *,
        mint: str | None = None,
        decimals: int | None = None,
        account: str | None = None,
    ) -> None:
        """Set amount (exact int) and, when the decimals are known, ui_amount (exact decimal text)."""
        details["amount"] = raw
        if mint is None and account is not None:
            mint = self.account_mints.get(account)
        if mint is not None:
            details.setdefault("mint", mint)
        if decimals is None and mint is not None:
            decimals = self.decimals.get(mint)
        elif decimals is not None and mint is not None and mint in self.decimals and self.decimals[mint] != decimals:
            self.warnings.append(
                f"instruction claims {decimals} decimals for mint {mint}, which has {self.decimals[mint]}"
            )
        if decimals is not None:
            details["decimals"] = decimals
            details["ui_amount"] = format(scale(raw, decimals), "f")


def sol_text(lamports: int) -> str:
    return format(scale(lamports, 9), "f")


def pubkey_at(data: bytes, offset: int) -> str:
    chunk = data[offset : offset + 32]
    if len(chunk) != 32:
        raise ValueError("short public key")
    return str(Pubkey.from_bytes(chunk))


def coption_pubkey(data: bytes, offset: int) -> tuple[str | None, int]:
    # Token instruction data encodes COption<Pubkey> as a 1-byte tag then the key when present.
    flag = data[offset]
    if flag == 0:
        return None, offset + 1
    return pubkey_at(data, offset + 1), offset + 33
