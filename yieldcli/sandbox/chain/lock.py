"""One lock per sandbox state folder, shared by every thread and every process that uses the folder.

The ledger (`state.json`) and the chain (`chain.json`) are each loaded, changed and saved whole; two
processes doing that at once would each save over the other's change. Every load-modify-save runs
under this lock: `fcntl.flock` on `<folder>/.lock` between processes, and one re-entrant thread lock
within a process (flock is per open file, so the ledger and the chain of one process must share one
`FolderLock`, which `folder_lock()` ensures).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from yieldcli.errors import ConfigError
from yieldcli.files import take_file_lock

LOCK_NAME = ".lock"

_registry: dict[str, FolderLock] = {}
_registry_lock = threading.Lock()


class FolderLock:
    """Re-entrant within a thread; the file lock is taken by the outermost acquire and let go by the last release."""

    def __init__(self, folder: Path):
        self.path = folder / LOCK_NAME
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    def acquire(self) -> None:
        self._thread_lock.acquire()
        try:
            if self._depth == 0:
                try:
                    self._fd = take_file_lock(self.path)
                except OSError as exc:
                    raise ConfigError(
                        f"cannot lock the sandbox state folder {self.path.parent}: {exc.strerror or exc}",
                        hint="run `yield sandbox reset` to start the sandbox afresh",
                    ) from None
            self._depth += 1
        except BaseException:
            self._thread_lock.release()
            raise

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the file lets the flock go
        self._thread_lock.release()

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def folder_lock(folder: Path | str) -> FolderLock:
    """The process's one lock for `folder`."""
    key = os.path.abspath(folder)
    with _registry_lock:
        lock = _registry.get(key)
        if lock is None:
            lock = _registry[key] = FolderLock(Path(key))
        return lock


def remove_stale_temporaries(path: Path) -> None:
    """Delete what a process killed in `write_atomically` left of `path`. Call under the folder lock:
    every write happens under it, so no temporary file there belongs to a live writer."""
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            stale.unlink()
        except OSError:
            pass


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """What changes when another process replaces the file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class SyncedLock:
    """A lock that brings its holder up to date once acquired (the runtime: its file and its clock)."""

    def __init__(self, lock: Any, sync: Callable[[], None]):
        self.lock = lock
        self.sync = sync

    def __enter__(self) -> None:
        self.lock.acquire()
        try:
            self.sync()
        except BaseException:
            self.lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self.lock.release()
