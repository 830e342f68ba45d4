"""The process environment in one object: streams, terminal detection, variables, clock.

Commands never read `os.environ` or call `isatty()` themselves; they ask this object, so tests and
embedded uses can hand in their own.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import TextIO


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Environment:
    # A plain class, not a dataclass: importing dataclasses costs start-up time on every run.
    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        vars: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.stdin = sys.stdin if stdin is None else stdin
        self.stdout = sys.stdout if stdout is None else stdout
        self.stderr = sys.stderr if stderr is None else stderr
        self.vars = dict(os.environ) if vars is None else vars
        self.clock = clock
        self.sleep = sleep

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
