"""Text every renderer shares: service text made safe for a terminal, and stable JSON.

A leaf module (the standard library and `yieldcli.escapes` only), so the sink (`output`) and the
drawing (`layout`, `tables`, `review_view`) depend on it and never on each other in a circle.
"""

from __future__ import annotations

import os
import textwrap
from typing import Any

from yieldcli.escapes import escaped


def printable(text: str) -> str:
    """Text from the service made safe for a terminal and read as it is: control characters (escape
    sequences that could clear the screen or retitle the window, newlines that would break a row),
    bidirectional controls that reorder what follows, zero-width and other default-ignorable code
    points appear as `\\u{202E}` (`yieldcli.escapes`)."""
    return escaped(text)


def dumps(value: Any) -> str:
    """Stable JSON: Python ints stay exact at any size, non-ASCII stays readable."""
    import json  # on first use: `yield --help` and completion import the formats' registry, not json

    return json.dumps(value, ensure_ascii=False)


def wrapped(text: str, stream: Any) -> str:
    """`text` broken at word boundaries to the width of the terminal `stream` is on, each line at most
    that wide (a word longer than a line, a URL or an address, stays whole on its own line); as it is
    when `stream` is no terminal: a script reads each message on one line."""
    try:
        if not stream.isatty():
            return text
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return text
    if width <= 0 or all(len(line) <= width for line in text.split("\n")):
        return text
    return "\n".join(
        textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False) if len(line) > width else line
        for line in text.split("\n")
    )
