"""Output on a stream that cannot encode Unicode (`PYTHONIOENCODING=ascii`, a latin-1 terminal).

Tables and reviews are drawn with a few typographic characters (rules, ellipses, dashes, arrows).
Where the stream's encoding has no such character it is written as its ASCII look-alike; any other
character the encoding lacks becomes `?` for people, and a `\\uXXXX` escape in the machine formats,
which is exactly what JSON itself would write, so data stays exact and parseable. Installed as the
stream's error handler, it covers every writer at once (rich, the sink, the prompt, error lines).
"""

from __future__ import annotations

import codecs
from typing import TextIO

# Every non-ASCII character the drawing code writes, and what it becomes.
LOOK_ALIKES = {
    "─": "-",
    "━": "-",
    "│": "|",
    "…": "...",
    "—": "-",
    "–": "-",
    "−": "-",
    "·": ".",
    "•": "*",
    "→": "->",
    "←": "<-",
    "≈": "~",
    "✓": "ok",
    "✗": "x",
    "⚠": "!",
    "\ufffd": "?",
    "\u00a0": " ",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
    "×": "x",
    "≥": ">=",
    "≤": "<=",
}
PEOPLE = "yield-ascii-people"
MACHINE = "yield-ascii-machine"


def _people(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)
    text = error.object[error.start : error.end]
    return "".join(LOOK_ALIKES.get(c, "?") for c in text), error.end


def _machine(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)
    out = []
    for c in error.object[error.start : error.end]:
        code = ord(c)
        if code > 0xFFFF:  # JSON writes characters beyond the BMP as a surrogate pair
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), error.end


codecs.register_error(PEOPLE, _people)
codecs.register_error(MACHINE, _machine)


def cannot_encode(stream: TextIO) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        "".join(LOOK_ALIKES).encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return True
    return False


def protect(stream: TextIO, *, machine: bool = False) -> None:
    """Make `stream` write what it cannot encode as above, when it is such a stream and has not
    been told otherwise (`PYTHONIOENCODING=ascii:replace` is the user's choice and stays)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is None or not cannot_encode(stream):
        return
    if getattr(stream, "errors", "strict") not in ("strict", PEOPLE, MACHINE):
        return
    reconfigure(errors=MACHINE if machine else PEOPLE)
