"""Text someone else wrote, escaped where it could read otherwise than it is (issue 35)."""

from __future__ import annotations

import pytest

from yieldcli.escapes import escaped, hidden

HIDDEN = [
    *(chr(c) for c in range(0x20)),
    "\x7f",
    *(chr(c) for c in range(0x80, 0xA0)),
    *(chr(c) for c in range(0x202A, 0x202F)),  # LRE RLE PDF LRO RLO
    *(chr(c) for c in range(0x2066, 0x206A)),  # LRI RLI FSI PDI
    "\u200e",
    "\u200f",
    "\u061c",
    "\u200b",
    "\u200c",
    "\u200d",
    "\ufeff",
    "\u2060",
    "\u00ad",
    "\u034f",
    "\u115f",
    "\u3164",
    "\ufe0f",
    "\U000e0041",  # a tag character
    "\u2028",
    "\u2029",
    "\ue000",  # private use
    "\U000e01ef",  # a variation selector supplement
]


@pytest.mark.parametrize("ch", HIDDEN, ids=lambda ch: f"U+{ord(ch):04X}")
def test_every_hidden_character_is_escaped(ch):
    assert hidden(ch)
    assert escaped(f"a{ch}b") == f"a\\u{{{ord(ch):04X}}}b"


def test_what_reads_as_it_is_stays():
    for text in ("refund 10 USDC", "Überweisung", "日本語", "مرحبا", "emoji 🙂", "tab-free", "a\\u{202E}b"):
        assert escaped(text) == text


def test_a_reversed_memo_reads_as_written():
    # "pay 10 USDC to EVIL" reversed on screen by U+202E; escaped, what the bytes say is what is read.
    assert escaped("deposit \u202eLIVE ot CDSU 0001\u202c") == "deposit \\u{202E}LIVE ot CDSU 0001\\u{202C}"
    assert escaped("a\u200bb\u2066c\u2069") == "a\\u{200B}b\\u{2066}c\\u{2069}"
    assert escaped("\x1b[2J") == "\\u{001B}[2J"
