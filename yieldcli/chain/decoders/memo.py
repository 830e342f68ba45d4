"""The Memo programs: the text a transaction carries."""

from __future__ import annotations

from yieldcli.chain.decoders.common import DecodeContext


def decode_memo(data: bytes, accts: list[str | None], ctx: DecodeContext, program_id: str):
    return "memo", {"text": data.decode("utf-8")}, tuple("signer" for _ in accts)
