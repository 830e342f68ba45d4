"""The process environment in one object: streams, terminal detection, variables, clock.

Commands never read `os.environ` or call `isatty()` themselves; they ask this object, so tests and
embedded uses can hand in their own.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, TextIO


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@dataclass
class Environment:
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    vars: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep

    @property
    def stdin_isatty(self) -> bool:
        return _isatty(self.stdin)

    @property
    def stdout_isatty(self) -> bool:
        return _isatty(self.stdout)

    @property
    def stderr_isatty(self) -> bool:
        return _isatty(self.stderr)

    def get(self, name: str) -> str | None:
        """An environment variable, with empty values treated as unset."""
        value = self.vars.get(name)
        return value if value else None

    def color_enabled(self, choice: str, stream_isatty: bool) -> bool:
        """--color auto|always|never, then NO_COLOR and FORCE_COLOR (no-color.org, force-color.org)."""
        if choice == "always":
            return True
        if choice == "never":
            return False
        if self.get("NO_COLOR") is not None:
            return False
        if self.get("FORCE_COLOR") is not None:
            return True
        return stream_isatty and self.get("TERM") != "dumb"

    @property
    def interactive(self) -> bool:
        """Prompts, spinners and progress bars only when a person is watching."""
        return self.stdin_isatty and self.stderr_isatty
