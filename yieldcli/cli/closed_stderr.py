"""A stderr that can no longer be written is treated as closed, whatever the reason.

stderr carries what a person reads on the way (warnings, the spinner, `-v`'s log, the error line); a
command's result and exit code never depend on it. When writing to it fails because its reader went
away (EPIPE), its disk is full (ENOSPC, `yield ... 2>/dev/full`, a full log partition), or its
device failed (EIO), the run goes on as if stderr were closed: what it would have said goes nowhere,
quietly, and the command ends as it would have, with its own exit code, its stdout whole, and no
traceback. Without this, the first warning written during a send raised out of the send, and the
error line of a failed run turned into exit 1.
"""

from __future__ import annotations

import errno
import os
from typing import Any, TextIO, cast

# The write errors that mean the stream is gone for this run, not a bug of ours.
GONE = frozenset({errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EDQUOT})


class _Sturdy:
    """`stream`, whose writes and flushes that fail for a reason in `GONE` turn it into /dev/null."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.lost = False  # once true, everything written went nowhere

    def write(self, text: str) -> int:
        if self.lost:
            return len(text)
        try:
            return self._stream.write(text)
        except OSError as exc:
            self._gone(exc)
            return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.lost:
            return
        try:
            self._stream.flush()
        except OSError as exc:
            self._gone(exc)

    def _gone(self, exc: OSError) -> None:
        if exc.errno not in GONE:
            raise exc
        self.lost = True
        try:
            # What is still buffered for it, and the interpreter's last flush, meet /dev/null instead.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass  # not a file descriptor (a test's capture): nothing is flushed to it at exit either

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def sturdy(stream: TextIO) -> TextIO:
    """`stream` treated as closed once writing to it fails for a reason in `GONE` (see above)."""
    if isinstance(stream, _Sturdy) or stream is None:
        return stream
    return cast("TextIO", _Sturdy(stream))
