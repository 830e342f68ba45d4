"""The yes/no question asked before signing, and what Ctrl-C at it means.

The question is asked from inside the event loop (`asyncio.run`), whose own SIGINT handler only
schedules a cancellation that the blocked read never sees: Ctrl-C would do nothing until Enter.
While the question is on screen, Ctrl-C raises at once instead, and ends the run as declined.
"""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, NoReturn

import typer

from yieldcli.errors import Declined, ExitCode

if TYPE_CHECKING:
    from types import FrameType


class Interrupted(Declined):
    """Ctrl-C at the question: nothing was signed, and the run ends as an interrupt does."""

    exit_code = ExitCode.INTERRUPTED
    kind = "declined.interrupted"


def ask(question: str) -> bool:
    """True for yes. Ctrl-C raises `Interrupted`; end of input (Ctrl-D) is a no."""
    interrupted: list[int] = []

    def on_sigint(signum: int, frame: FrameType | None) -> NoReturn:
        interrupted.append(signum)
        raise KeyboardInterrupt

    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main_thread else None
    # An ignored SIGINT (a background job) stays ignored: its owner chose that.
    replace = main_thread and previous is not signal.SIG_IGN
    if replace:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        return typer.confirm(question, default=False, err=True)
    except typer.Abort:
        if interrupted:
            raise Interrupted("declined; nothing was signed") from None
        return False
    finally:
        if replace:
            signal.signal(signal.SIGINT, previous)
