"""A real terminal of a chosen size, driven like a person: tmux runs a shell, we type and read the screen."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import time
from pathlib import Path

from tests.conftest import YIELD

TMUX = shutil.which("tmux")
BIN = str(Path(YIELD).parent)
_COUNT = itertools.count()


class Screen:
    def __init__(
        self,
        folder: Path,
        *,
        width: int,
        height: int = 40,
        shell: list[str] | None = None,
        env: dict[str, str] | None = None,
    ):
        # A server of its own: a second session on one server would inherit the first one's environment.
        self.socket = str(folder / f"tmux-{next(_COUNT)}.sock")
        self.width = width
        variables = {
            **os.environ,
            "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
            "TERM": "xterm-256color",
            "PS1": "$ ",
            "PROMPT": "$ ",
            **(env or {}),
        }
        variables.pop("TMUX", None)
        self._tmux(
            "new-session",
            "-d",
            "-x",
            str(width),
            "-y",
            str(height),
            *(shell or ["bash", "--norc", "--noprofile"]),
            env=variables,
        )
        self.wait_for("$")

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        proc = subprocess.run([TMUX, "-S", self.socket, *args], capture_output=True, text=True, env=env, timeout=30)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def type(self, text: str, *keys: str) -> None:
        if text:
            self._tmux("send-keys", "-l", text)
        for key in keys:
            self._tmux("send-keys", key)

    def run(self, command: str) -> str:
        """Run a shell command and return the screen once it has finished (`__done__` and its status
        are printed last; the typed line shows `__do""ne__`, so it does not count)."""
        self.type(f'clear; {command}; echo __do""ne__$?', "Enter")
        return self.wait_for("__done__", timeout=90)

    def text(self, *, escapes: bool = False) -> str:
        """The visible screen; with `escapes`, its colours as ANSI sequences too."""
        return self._tmux("capture-pane", "-p", *(["-e"] if escapes else []))

    def lines(self) -> list[str]:
        return self.text().split("\n")

    def wait_for(self, *texts: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.text()
            if all(t in screen for t in texts):
                return screen
            assert time.monotonic() < deadline, f"did not see {texts!r} on the screen:\n{screen}"
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run([TMUX, "-S", self.socket, "kill-server"], capture_output=True, timeout=30)
