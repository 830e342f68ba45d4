"""Ending the `yield` process without tearing the interpreter down when the teardown has nothing to do.

After a command's last byte is written, Python's finalization clears every imported module and
frees its objects one by one: about 30 ms of a 210 ms `yield positions` here, whose only effect is
on memory the kernel takes back at once anyway. So the executable ends with `os._exit` from the
last exit function, once everything that must happen at exit has: the interpreter has joined the
threads that are not daemons, run every other exit function (logging's flush among them), and the
standard streams are flushed here.

It applies only when this is the first exit function registered: the ones registered before it
(coverage's, a sitecustomize's) would run after it, so then the process ends the usual way. An
exit status that is not a number, a stream that cannot be flushed, an exception that escaped: the
usual way too, which says what it always said.
"""

from __future__ import annotations

import atexit
import os
import sys

_status: list[int] = []  # the command's exit status, once it has one


def arm() -> bool:
    """Register the quick ending, if nothing registered an exit function first. True if it was."""
    count = getattr(atexit, "_ncallbacks", None)  # CPython's; without it, leave finalization be
    if count is None or count() != 0:
        return False
    atexit.register(_leave)
    return True


def ended(code: object) -> None:
    """The command ended with `sys.exit(code)`: the status the process will leave with."""
    if code is None or (isinstance(code, int) and not isinstance(code, bool)):
        _status[:] = [int(code or 0)]


def _leave() -> None:
    if not _status:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # the usual ending reports it, as it always did
    os._exit(_status[0])
