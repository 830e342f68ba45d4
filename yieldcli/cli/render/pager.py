"""Long output on a terminal goes through a pager, as git and gh do; never when stdout is piped.

The pager is `YIELD_PAGER`, else `PAGER`, else `less -FRX` (quit when one screen is enough, keep
colours, leave the text on screen). An empty value or `cat` means no pager.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess

from yieldcli.environment import Environment

DEFAULT = "less -FRX"


def command(env: Environment) -> list[str] | None:
    for name in ("YIELD_PAGER", "PAGER"):
        if name in env.vars:
            try:
                words = shlex.split(env.vars[name])
            except ValueError:  # unbalanced quotes: run it as one word, and say so if it fails
                words = [env.vars[name]]
            return None if not words or words == ["cat"] else words
    return shlex.split(DEFAULT)


def screen_size(env: Environment) -> tuple[int, int]:
    """Columns and lines of the terminal stdout is on; 0 lines when it does not say (a fresh pty)."""
    try:
        size = os.get_terminal_size(env.stdout.fileno())
    except (AttributeError, ValueError, OSError):
        return 80, 0
    return size.columns or 80, size.lines


def show(env: Environment, text: str, *, enabled: bool) -> None:
    """Write `text` to stdout, through the pager when it is longer than the screen."""
    # A dumb terminal (an editor's shell) cannot drive less; an unknown height gives nothing to compare.
    words = command(env) if enabled and env.stdout_isatty and env.get("TERM") != "dumb" else None
    lines = screen_size(env)[1]
    if words is None or not lines or text.count("\n") < lines:
        env.stdout.write(text)
        env.stdout.flush()
        return
    pager_env = {**env.vars, "LESS": env.vars.get("LESS", "FRX"), "LV": env.vars.get("LV", "-c")}
    env.stdout.flush()
    try:
        proc = subprocess.Popen(words, stdin=subprocess.PIPE, env=pager_env, stdout=env.stdout)
    except OSError as exc:  # no such pager: the output matters more than the paging
        env.stderr.write(
            f"warning: cannot start pager {words[0]!r} ({exc.strerror}); set YIELD_PAGER or use --no-pager\n"
        )
        env.stdout.write(text)
        env.stdout.flush()
        return
    # Ctrl-C belongs to the pager while it runs (git does the same).
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        pipe = proc.stdin
        assert pipe is not None  # Popen(stdin=PIPE) above
        try:
            # In the terminal's encoding, as stdout would have written it (see ascii_fallback).
            stream = env.stdout
            pipe.write(
                text.encode(
                    getattr(stream, "encoding", None) or "utf-8", errors=getattr(stream, "errors", None) or "replace"
                )
            )
            pipe.close()
        except BrokenPipeError:  # the user quit before reading everything
            pass
        proc.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
