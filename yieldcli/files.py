"""Small files users point us at (keypairs, transactions): read whole, bounded, never blocking.

`-k /dev/zero` or a multi-gigabyte file must not exhaust memory, and a FIFO nobody writes to must
not hang the command: only regular files are read (standard input is the way to pipe), opened
without blocking, and never past a small limit.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Literal, NamedTuple, TextIO, overload

from yieldcli.errors import YieldError

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
# Never follow a symlink in the last part of the path, never wait on a FIFO, never take a terminal.
_SAFE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


# The hint for a pipe given as a file where `-` reads standard input instead (a keypair, a transaction).
PIPE_HINT = "to pipe it in, pass - and redirect standard input"


class SmallFile(NamedTuple):
    data: bytes
    mode: int  # st_mode, for permission warnings


@overload
def read_small_file(
    path: str,
    *,
    label: str,
    limit: int,
    error: type[YieldError],
    missing_hint: str | None = None,
    missing_kind: str | None = None,
    missing_ok: Literal[False] = False,
    pipe_hint: str | None = None,
) -> SmallFile: ...
@overload
def read_small_file(
    path: str,
    *,
    label: str,
    limit: int,
    error: type[YieldError],
    missing_hint: str | None = None,
    missing_kind: str | None = None,
    missing_ok: bool,
    pipe_hint: str | None = None,
) -> SmallFile | None: ...
def read_small_file(
    path: str,
    *,
    label: str,
    limit: int,
    error: type[YieldError],
    missing_hint: str | None = None,
    missing_kind: str | None = None,
    missing_ok: bool = False,
    pipe_hint: str | None = None,
) -> SmallFile | None:
    """The bytes of the regular file at `path`, at most `limit` of them, or `error` saying why not.

    `label` names the file in messages, e.g. "keypair file ~/id.json (from config)". A missing
    file is an error too, unless `missing_ok` (then None). `pipe_hint` is said when the path is a
    pipe or a device: where the caller also reads `-` from standard input, it says so.
    """
    label = printable(label)
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise error(f"{label} does not exist", hint=missing_hint, kind=missing_kind) from None
    except PermissionError:
        raise error(
            f"cannot read {label}: permission denied", hint=f"check its owner and mode (`ls -l {path}`)"
        ) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path (possible from a config file)
        raise error(f"cannot read {label}: {_reason(exc)}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{label} is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise error(f"{label} is {kind}, not a regular file", hint=pipe_hint)
        if info.st_size > limit:
            raise error(f"{label} is too large ({info.st_size} bytes; at most {limit})")
        data = _read_at_most(fd, limit + 1)  # the file may have grown since fstat
        if len(data) > limit:
            raise error(f"{label} is too large (more than {limit} bytes)")
        return SmallFile(data, info.st_mode)
    except OSError as exc:
        raise error(f"cannot read {label}: {_reason(exc)}") from None
    finally:
        os.close(fd)


def read_small_stream(stream: TextIO, *, limit: int, what: str, error: type[YieldError]) -> str:
    """At most `limit` characters of text from standard input, or `error` when there is more."""
    try:
        text = stream.read(limit + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {what} from standard input: {_reason(exc)}") from None
    if len(text) > limit:
        raise error(f"{what} on standard input is too large (more than {limit} characters)")
    return text


# A path's value on standard input, as the Solana CLI spells it (`-k -`, `--wallets-file stdin:`).
STDIN_SOURCES = ("-", "stdin:")


def reads_stdin(source: str) -> bool:
    return source in STDIN_SOURCES


def write_atomically(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data`, private to the user (0600): a reader or a crash sees the old file
    or the new one, never a part. The temporary file is `.NAME.*.tmp` beside it, fresh per write, so
    two writers never share one (`remove_stale_temporaries` knows the pattern)."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)


def take_file_lock(path: Path) -> int:
    """An exclusive `flock` on `path` (created 0600, with its folder), held by the returned descriptor:
    closing it lets the lock go, and so does the process dying (no stale lock after a kill -9). A
    symlink in its place is not followed (no file is created where it points), and what is not a
    regular file is an OSError: only the lock itself is waited for."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | _SAFE_FLAGS, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


class Unsafe(Exception):
    """A file that must not be used as it is; `why` says what it is ("is a named pipe, not a regular
    file"), to follow the file's name in a message."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def open_checked(path: Path, flags: int = os.O_RDONLY, *, create: bool = False) -> int | None:
    """A descriptor of the file at `path` (None when there is none and `create` is false), opened once
    and judged on that descriptor: `Unsafe` unless it is a regular file of ours (or root's) that
    nobody else may write, with one name only. A symlink in its place is never followed (not even a
    dangling one to create its target), a FIFO never waited on (`O_NONBLOCK`): both are `Unsafe`.
    With `create`, a missing file is made, 0600, and only a new one (`O_EXCL`): a name that appears
    in between is not ours. The folders above are the caller's to judge."""
    extra = os.O_CREAT | os.O_EXCL if create else 0
    try:
        fd = os.open(path, flags | extra | _SAFE_FLAGS, 0o600)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unsafe("is a symbolic link (not followed)") from None
        if exc.errno == errno.ENXIO:  # opened for writing: a FIFO nobody reads
            raise Unsafe("is a named pipe, not a regular file") from None
        if exc.errno == errno.EISDIR:
            raise Unsafe("is a directory, not a file") from None
        raise
    try:
        check_opened(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_opened(fd: int) -> os.stat_result:
    """`Unsafe` unless the open file `fd` is a regular file of ours or root's, writable by nobody else,
    with one link (another name, in a folder an agent reaches, would let it be changed there)."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise Unsafe("is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
        raise Unsafe(f"is {kind}, not a regular file")
    if info.st_uid not in (os.getuid(), 0):
        raise Unsafe("belongs to another user")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise Unsafe("can be written by others")
    if info.st_nlink != 1:
        raise Unsafe(f"has {info.st_nlink} hard links (another name could change it)")
    return info


def read_fd(fd: int, limit: int | None = None) -> bytes:
    """Everything from the start of `fd` (at most `limit` + 1 bytes, so a caller sees it is too long)."""
    os.lseek(fd, 0, os.SEEK_SET)
    if limit is not None:
        return _read_at_most(fd, limit + 1)
    chunks: list[bytes] = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def read_checked(path: Path, *, follow: bool, limit: int | None = None) -> tuple[bytes, Path] | None:
    """The bytes of the file at `path` and where it really is, read through one checked descriptor
    (`open_checked`); None when it does not exist. `follow`: `path` may be a symlink (a policy a
    dotfile manager links), resolved now, every time: the file it names and every folder above it
    are judged (`others_can_change`), and the file is opened without following a link, so one
    swapped in after the resolution is refused, never read. Without `follow`, only the folders of
    `path` are resolved. `Unsafe` says what is wrong; an OSError is one the system gave."""
    real = Path(os.path.realpath(path)) if follow else Path(os.path.realpath(path.parent)) / path.name
    fd = open_checked(real)
    if fd is None:
        return None
    try:
        problem = folders_can_change(real, check_opened(fd).st_uid)
        if problem is not None:
            raise Unsafe(f"is in the folder {problem.where}, which {problem.why}")
        data = read_fd(fd, limit)
        if limit is not None and len(data) > limit:
            raise Unsafe(f"is too large (more than {limit} bytes)")
        return data, real
    finally:
        os.close(fd)


class Change(NamedTuple):
    """Who, besides us, could change a file: `which` is "file" or "folder", `where` the one at fault."""

    which: str
    why: str
    where: Path


def others_can_change(path: Path, info: os.stat_result | None = None) -> Change | None:
    """Why a file whose content decides what is trusted must not be read, or None.

    It is judged where it really is: every symlink resolved, then the file and every folder above
    it up to `/`. Another user than us or root owns one of them, or others may write one. A sticky
    folder, as /tmp, is an exception only for an entry that is our own: there others can add names
    but cannot rename or replace ours. `info`: the caller's stat of `path`, when it has one; the
    resolved file is stat'ed again all the same (the link may have changed since)."""
    del info  # the real file, not what `path` named when the caller looked, is what counts
    real = Path(os.path.realpath(path))
    target = os.stat(real)  # FileNotFoundError for a missing file or a dangling link, as before
    uid = os.getuid()
    if target.st_uid not in (uid, 0):
        return Change("file", "belongs to another user", real)
    if target.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return Change("file", "can be written by others", real)
    return folders_can_change(real, target.st_uid)


def folders_can_change(real: Path, entry_owner: int) -> Change | None:
    """Why the folders above `real` (a path with every link resolved, of a file owned by `entry_owner`)
    would let others replace it, or None; see `others_can_change`."""
    uid = os.getuid()
    for folder in real.parents:
        st = os.stat(folder)
        if st.st_uid not in (uid, 0):
            return Change("folder", "belongs to another user", folder)
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not (st.st_mode & stat.S_ISVTX and entry_owner == uid):
            return Change("folder", "can be written by others", folder)
        entry_owner = st.st_uid
    return None


def _fsync_dir(path: Path) -> None:
    """Make the rename itself durable: without it a power loss can bring the old file back."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def path_forms(path: str) -> list[str]:
    """A path as a message may name it: as given, absolute, every link resolved, and from `~`."""
    forms = [path, os.path.abspath(path), os.path.realpath(path)]
    home = os.path.expanduser("~")
    return [*forms, *("~" + form[len(home) :] for form in forms if home != "~" and form.startswith(home + "/"))]


def printable(text: str) -> str:
    """`text` with control characters escaped: a path from a config file may hold a NUL or an ESC."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _read_at_most(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 65536))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, ValueError):
        return "the path contains a NUL byte"
    return getattr(exc, "strerror", None) or type(exc).__name__
