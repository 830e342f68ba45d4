"""Text someone else wrote, shown so that it reads as it is: every character that could make it read
otherwise written as `\\u{XXXX}`.

Escaped: C0 and C1 controls (and DEL), which move the cursor, clear the screen or break a line; the
bidirectional controls (U+202A-202E, U+2066-2069, U+200E/F, U+061C), which reorder what follows; the
zero-width and other default-ignorable code points (U+200B-200D, U+2060, U+FEFF, U+00AD, variation
selectors, tags, ...), which are there and not seen; every other format character, line and paragraph
separators, surrogates, private-use and unassigned code points. The standard library only: the
review (chain/tx) and the terminal's drawing (cli/render) both use it.
"""

from __future__ import annotations

# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt), as ranges.
_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


def default_ignorable(ch: str) -> bool:
    """Whether `ch` is one of Unicode's default-ignorable code points: drawn as nothing."""
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _IGNORABLE)


def hidden(ch: str) -> bool:
    """Whether `ch` can change how the text around it reads, or is there without being seen."""
    code = ord(ch)
    if 0x20 <= code < 0x7F:
        return False
    if code < 0x20 or 0x7F <= code < 0xA0 or any(lo <= code <= hi for lo, hi in _IGNORABLE):
        return True
    import unicodedata  # on first use: printable ASCII, nearly all text shown, never needs it

    return unicodedata.category(ch) in _CATEGORIES


def escaped(text: str) -> str:
    """`text` with every hidden character written as `\\u{XXXX}`: `"a\\u202eb"` -> `a\\u{202E}b`."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(f"\\u{{{ord(ch):04X}}}" if hidden(ch) else ch for ch in text)
