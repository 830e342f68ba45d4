"""The Memo programs: the text a transaction carries."""

from __future__ import annotations

from yieldcli.chain.tx.decoders.common import DecodeContext, Decoded
from yieldcli.escapes import escaped


def decode_memo(data: bytes, accts: list[str | None], ctx: DecodeContext, program_id: str) -> Decoded:
    """The memo's text as written (`text`) and as shown (`text_escaped`: every control, bidirectional,
    zero-width or other default-ignorable character as `\\u{XXXX}`, so the text reads as it is)."""
    text = data.decode("utf-8")
    return "memo", {"text": text, "text_escaped": escaped(text)}, tuple("signer" for _ in accts)
