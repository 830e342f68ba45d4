"""Running a `yield` command line inside the test's own Python process: what the executable does, minus
the process.

`call_yield(args, input=..., env=..., timeout=...)` hands `yieldcli.cli.entry.call` the command line
as `sys.argv`, the environment as `os.environ` (the whole of it, as a child process would get it),
standard input (a pipe fed with `input`, else /dev/null) and standard output and error (files, read
back once the command ended), and returns the same `Result` a process gives: the exit code
(`SystemExit`'s, 1 and a traceback on stderr for an exception that escaped, as Python's own ending
writes them), stdout and stderr; past `timeout` a timer stops the command and `TimeoutExpired` is
raised, as the process runner does. Afterwards everything a run changes in the process is put back:
the environment, argv, the streams (the test's own threads, a served sandbox say, write where they
wrote before all along), the signal handlers, the logging handlers, the keyring backend
`keyring` chose from the environment, and what `app` remembers of the run (its session, the
embedded sandbox it started, the commands it built: `app.end_run`); threads the command started and
left running are waited for, as the interpreter waits for them before a process ends.

What only a new interpreter does cannot happen here, so a command line that needs it runs as a
process (`@pytest.mark.process`, or the `run_process` fixture): signals sent to it, a terminal
(pty, tmux), a closed pipe, the quick exit, start-up time, and the variables only an interpreter
reads at its start (`INTERPRETER_ONLY`), which are refused here rather than silently ignored.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import pytest

# Read by the interpreter at its start, or the import system: they would change nothing here.
INTERPRETER_ONLY = ("PYTHONPATH", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONHOME", "LANG", "LC_ALL", "LC_CTYPE")
SIGNALS = [
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE", "SIGQUIT", "SIGTSTP", "SIGWINCH", "SIGCHLD", "SIGALRM")
    if hasattr(signal, name)
]
DAEMON_GRACE = 2.0  # seconds the daemon threads a run left are given to end
_ONE_AT_A_TIME = threading.Lock()  # sys.stdout and os.environ are the process's: one run at a time


def exit_status(code: object, stderr: io.TextIOBase) -> int:
    """The status a process ends with for `sys.exit(code)`: None is 0, a number itself, anything
    else is printed on stderr and is 1 (as Python's own handling of SystemExit does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    stderr.write(f"{code}\n")
    return 1


class _TimedOut(BaseException):
    """Raised in the command by the timer: past what the app catches, as a process is killed past its timeout."""


def call_yield(args: list[str], *, input: str | None, env: dict[str, str], timeout: float = 60):
    """One `yield` command line in this process; a `tests.conftest.Result`."""
    from yieldcli.cli import app, entry

    interpreter_only = sorted(name for name in INTERPRETER_ONLY if env.get(name) != os.environ.get(name))
    if interpreter_only:
        pytest.fail(
            f"{', '.join(interpreter_only)} would change nothing in this process: "
            "mark the test @pytest.mark.process to run `yield` as a process of its own"
        )
    if threading.current_thread() is not threading.main_thread():
        # Signal handlers can be set from the main thread only, and the streams are the process's.
        pytest.fail("`yield` was called in-process from a thread: mark the test @pytest.mark.process")
    if not _ONE_AT_A_TIME.acquire(blocking=False):
        pytest.fail("a second `yield` ran in-process while one was running: mark the test @pytest.mark.process")
    try:
        return _call(entry, app, args, input, env, timeout)
    finally:
        _ONE_AT_A_TIME.release()


def _call(entry, app, args: list[str], input: str | None, env: dict[str, str], timeout: float):
    from tests.conftest import Result

    saved_environ = dict(os.environ)
    saved_argv = sys.argv
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_signals = {number: signal.getsignal(number) for number in SIGNALS}
    root_logger = logging.getLogger()
    saved_handlers = root_logger.handlers[:]
    threads_before = set(threading.enumerate())
    stdin, feeder = _stdin(input)
    stdout = _capture(errors="strict")
    stderr = _capture(errors="backslashreplace")
    try:
        os.environ.clear()
        os.environ.update(env)
        _forget_keyring_backend()
        sys.argv = ["yield", *args]
        # The test's own threads (a served sandbox, a stand-in server, and the threads they start) write
        # where they wrote before, as they would beside a process; the command and its threads write to
        # the command's streams.
        threading.Thread.start = _noting_who_starts  # type: ignore[method-assign]
        sys.stdin = stdin
        sys.stdout = _ByThread(stdout, saved_streams[1])  # type: ignore[assignment]
        sys.stderr = _ByThread(stderr, saved_streams[2])  # type: ignore[assignment]
        # The library warns through the `yieldcli` logger; with no handler anywhere, as in a process of
        # its own, Python's last resort writes the warning on stderr. pytest's handlers would take it.
        root_logger.handlers = []
        signal.signal(signal.SIGALRM, _time_out)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            entry.call(list(args))
            code = 0
        except _TimedOut:
            raise subprocess.TimeoutExpired(["yield", *args], timeout) from None
        except SystemExit as exc:
            code = exit_status(exc.code, stderr)
        except KeyboardInterrupt:
            traceback.print_exc(file=stderr)
            code = 130
        except BaseException:  # noqa: BLE001 -- an exception that escaped ends a process with 1 and its traceback
            traceback.print_exc(file=stderr)
            code = 1
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            app.end_run()
            # The interpreter waits for the threads that are not daemons before a process ends; the
            # others end with it: here they are given a moment to end (an embedded sandbox's last
            # request), so that the next test starts with the threads this one started with.
            deadline = time.monotonic() + DAEMON_GRACE
            for thread in set(threading.enumerate()) - threads_before:
                if _the_commands(thread):  # the test's own (a server's request threads) are its business
                    _wait_for(thread, None if not thread.daemon else deadline)
            for stream in (stdout, stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
        return Result(code, _read(stdout), _read(stderr))
    finally:
        root_logger.handlers = saved_handlers
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        threading.Thread.start = _START  # type: ignore[method-assign]
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_environ)
        _forget_keyring_backend()
        for number, handler in saved_signals.items():
            if handler is not None:
                signal.signal(number, handler)
        if feeder is not None:
            feeder.join()
        for stream in (stdin, stdout, stderr):
            stream.close()


_START = threading.Thread.start


def _noting_who_starts(thread: threading.Thread) -> None:
    thread._yield_started_by = threading.current_thread()  # type: ignore[attr-defined]
    _START(thread)


def _the_commands(thread: threading.Thread | None) -> bool:
    """The main thread, where the command runs, and the threads started from it while it ran."""
    while thread is not None:
        if thread is threading.main_thread():
            return True
        thread = getattr(thread, "_yield_started_by", None)
    return False


class _ByThread:
    """A standard stream that is the command's for the command's threads, and stays what it was for the
    test's own threads."""

    def __init__(self, command: io.TextIOWrapper, before: object):
        self._command, self._before = command, before

    def __getattr__(self, name: str) -> object:
        return getattr(self._command if _the_commands(threading.current_thread()) else self._before, name)


def _wait_for(thread: threading.Thread, deadline: float | None) -> None:
    """Until `thread` ends, or the deadline; one still being started is waited for too."""
    while True:
        try:
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0))
            return
        except RuntimeError:  # started by a thread of the command but not running yet
            if deadline is not None and time.monotonic() > deadline:
                return
            time.sleep(0.001)


def _time_out(signum: int, frame: object) -> None:
    raise _TimedOut


def _stdin(text: str | None) -> tuple[io.TextIOWrapper, threading.Thread | None]:
    """/dev/null when no input is given (as the process runner's DEVNULL), else a pipe fed from a thread
    and then closed, as a parent process writes a child's input."""
    if text is None:
        return open(os.devnull, encoding="utf-8"), None  # noqa: SIM115 -- closed by call_yield
    read_end, write_end = os.pipe()

    def feed() -> None:
        with open(write_end, "w", encoding="utf-8") as pipe:
            try:
                pipe.write(text)
            except BrokenPipeError:
                pass  # the command did not read it all: so does a parent's write end

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    return open(read_end, encoding="utf-8"), feeder  # noqa: SIM115 -- closed by call_yield


def _capture(errors: str) -> io.TextIOWrapper:
    """A real file (a descriptor, never a terminal), written as a pipe to a parent would be."""
    return io.TextIOWrapper(tempfile.TemporaryFile(), encoding="utf-8", errors=errors)


def _read(stream: io.TextIOWrapper) -> str:
    buffer = stream.buffer
    if buffer.closed:
        return ""
    buffer.seek(0)
    # As the process runner reads a child's output (text=True): universal newlines.
    return buffer.read().decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _forget_keyring_backend() -> None:
    """`keyring` chooses its backend once per process, from PYTHON_KEYRING_BACKEND: each run chooses again."""
    core = sys.modules.get("keyring.core")
    if core is not None:
        core._keyring_backend = None
