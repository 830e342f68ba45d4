"""The yes/no question asked before signing, and what Ctrl-C at it means.

The question is asked from inside the event loop (`asyncio.run`), whose own SIGINT handler only
schedules a cancellation that the blocked read never sees: Ctrl-C would do nothing until Enter.
While the question is on screen, Ctrl-C raises at once instead, and ends the run as declined.

Only keys pressed once the question is on screen answer it: what was typed ahead (a "y" and Enter
pressed while the review was still being drawn) is discarded before asking, as the terminal's
input queue is flushed. A yes must come from someone who saw what it signs.

The answer is waited for in short steps, not by a read that blocks until Enter: the kernel may hand
Ctrl-C's signal to any of the process's threads (the sandbox's servers, the HTTP pool's), and then
only a wait that returns lets the main thread run the handler. A blocking `input()` missed it about
one time in twelve on a loaded machine, and the question stayed on screen.
"""

from __future__ import annotations

import select
import signal
import sys
import threading
from typing import TYPE_CHECKING, NoReturn, TextIO

from yieldcli.errors import Declined, ExitCode

try:
    import termios
except ImportError:  # not POSIX: no terminal input queue to flush
    termios = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from types import FrameType

_STEP = 0.1  # seconds between looks for a pending Ctrl-C while nothing has been typed
_YES = ("y", "yes")
_NO = ("n", "no", "")  # Enter alone takes the default, no


class Interrupted(Declined):
    """Ctrl-C at the question: nothing was signed, and the run ends as an interrupt does."""

    exit_code = ExitCode.INTERRUPTED
    kind = "declined.interrupted"


def ask(question: str) -> bool:
    """True for yes. Ctrl-C raises `Interrupted`; end of input (Ctrl-D) is a no."""

    def on_sigint(signum: int, frame: FrameType | None) -> NoReturn:
        raise KeyboardInterrupt

    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main_thread else None
    # An ignored SIGINT (a background job) stays ignored: its owner chose that.
    replace = main_thread and previous is not signal.SIG_IGN
    if replace:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        while True:
            _discard_typed_ahead(sys.stdin)
            sys.stderr.write(f"{question} [y/N]: ")
            sys.stderr.flush()
            line = _read_line(sys.stdin)
            if line is None:  # end of input
                sys.stderr.write("\n")
                return False
            answer = line.strip().lower()
            if answer in _YES or answer in _NO:
                return answer in _YES
            sys.stderr.write("please answer y or n\n")
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        raise Interrupted("declined; nothing was signed") from None
    finally:
        if replace:
            signal.signal(signal.SIGINT, previous)


def _discard_typed_ahead(stream: TextIO) -> None:
    """Drop what a terminal holds that was typed before the question; nothing for a pipe or a file."""
    try:
        if termios is not None and stream.isatty():
            termios.tcflush(stream.fileno(), termios.TCIFLUSH)
    except (OSError, ValueError):
        pass  # no terminal to flush: nothing typed ahead to drop


def _read_line(stream: TextIO) -> str | None:
    """One line typed, or None at end of input; returns to the interpreter every `_STEP` seconds."""
    try:
        while not select.select([stream], [], [], _STEP)[0]:
            pass
    except (OSError, ValueError):  # not a file select can wait on: read as before
        pass
    line = stream.readline()
    return line or None
