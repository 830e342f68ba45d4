"""The Memo programs: the text a transaction carries."""

from __future__ import annotations

from yieldcli.chain.tx.decoders.common import DecodeContext, Decoded


def decode_memo(data: bytes, accts: list[str | None], ctx: DecodeContext, program_id: str) -> Decoded:
    return "memo", {"text": data.decode("utf-8")}, tuple("signer" for _ in accts)
