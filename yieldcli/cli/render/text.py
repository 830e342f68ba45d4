"""Text every renderer shares: service text made safe for a terminal, and stable JSON.

A leaf module (the standard library only), so the sink (`output`) and the drawing (`layout`,
`tables`, `review_view`) depend on it and never on each other in a circle.
"""

from __future__ import annotations

from typing import Any

_CONTROLS = {c: "\ufffd" for c in (*range(0x20), *range(0x7F, 0xA0))}


def printable(text: str) -> str:
    """Text from the service made safe for a terminal: control characters (escape sequences that
    could clear the screen or retitle the window, newlines that would break a row) become `�`."""
    return text.translate(_CONTROLS)


def dumps(value: Any) -> str:
    """Stable JSON: Python ints stay exact at any size, non-ASCII stays readable."""
    import json  # on first use: `yield --help` and completion import the formats' registry, not json

    return json.dumps(value, ensure_ascii=False)
