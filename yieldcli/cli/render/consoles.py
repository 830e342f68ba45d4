"""Rich consoles built from the Environment; imported only when something is drawn for a person."""

from __future__ import annotations

import io

from rich.console import Console

from yieldcli.environment import Environment


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # rich exits 1 here; a closed pipe is no error: the command's one handler ends it with 0.
        self.quiet = True
        raise BrokenPipeError


def console(env: Environment, *, stderr: bool, color: bool) -> Console:
    stream = env.stderr if stderr else env.stdout
    tty = env.stderr_isatty if stderr else env.stdout_isatty
    return _Console(
        file=stream,
        color_system="auto" if color else None,
        force_terminal=color or None,
        no_color=not color,
        highlight=False,
        # Off a terminal nothing is truncated or wrapped.
        width=None if tty else 4096,
        soft_wrap=not tty,
    )


def screen_console(env: Environment, *, color: bool, width: int) -> Console:
    """Draws into memory at the terminal's width, for the pager to show (or not)."""
    return Console(
        file=io.StringIO(),
        color_system="truecolor" if color else None,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        width=width,
    )
