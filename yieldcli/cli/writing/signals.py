"""SIGTERM and Ctrl-C around a send: they end the wait, and they never hide its outcome.

While the transaction is on its way (`while_sending`), SIGTERM cancels the wait as Ctrl-C does
(asyncio.run turns SIGINT into a cancellation already): the pipeline then prints the signature and
ends as interrupted. Once the wait is over the outcome is known, and until it is written
(`outcome_shown`) both signals are held: one that comes is noted, the position is not refreshed
after it, the outcome (its signature) is written, and the run then ends as interrupted (130). A
second one ends the run at once, as it would have without the hold: the journal keeps the send's
record until its outcome is shown, for the next send to report. Before, a SIGTERM in that window
killed the process with the money moved, nothing in the journal and no signature on screen.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from yieldcli.errors import ExitCode, YieldError

_HELD = (signal.SIGTERM, signal.SIGINT)


class InterruptedAfterOutcome(YieldError):
    """A signal came while a send's outcome was being written: written first, then the run ends."""

    exit_code = ExitCode.INTERRUPTED
    kind = "interrupted.after_outcome"


class SendSignals:
    """One run's handling of SIGTERM and Ctrl-C, from the send to its outcome on screen."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    @contextmanager
    def while_sending(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None  # entered inside the pipeline's coroutine, run by asyncio.run
        try:
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            yield
            return
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
            self._hold()

    def _hold(self) -> None:
        """From the end of the wait: note SIGTERM and Ctrl-C instead of dying or cancelling."""
        if self._previous:
            return
        try:
            for number in _HELD:
                if signal.getsignal(number) is not signal.SIG_IGN:  # an ignored one stays ignored: its owner chose that
                    self._previous[number] = signal.signal(number, self._note)
        except ValueError:  # not the main thread: nothing to hold
            self._previous = {}

    def _note(self, number: int, frame: FrameType | None) -> None:
        self.received.append(number)
        if len(self.received) > 1:
            # Asked twice (a service that holds the position's refresh until its timeout): stop now.
            # The journal keeps the send's record until its outcome is shown, so the next send
            # reports it; nothing is lost by not waiting.
            self.release()
            if number == signal.SIGINT:
                raise KeyboardInterrupt  # from inside a blocking read too (asyncio's own handler would wait)
            signal.raise_signal(number)

    def release(self) -> None:
        """The signals as they were before the hold (however the run ends)."""
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous = {}

    @contextmanager
    def outcome_shown(self) -> Iterator[None]:
        """Around writing the outcome; then the signals are as they were, and one noted ends the run."""
        try:
            yield
        finally:
            self.release()
        if self.received:
            name = signal.Signals(self.received[0]).name
            raise InterruptedAfterOutcome(f"interrupted ({name}) after the outcome above was written")
