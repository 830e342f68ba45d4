"""The audit log: every proposal, decision and execution, one JSON line each, chained by a keyed hash.

Each entry carries `seq`, `prev` (the `hash` of the entry before it) and `hash`, an HMAC-SHA256 of
its own canonical JSON under a key the log's folder does not hold: whoever can write the log but not
read the key cannot edit, reorder or add an entry, nor recompute the chain after doing so. A chain
cannot show that entries were cut off its end, so the length and head of the log are kept outside it
too: the anchor, `{"seq", "hash"}` of the last entry, rewritten under the log's lock after every
append. The key and the anchor live in the seal folder (private, in `yield`'s config folder beside
the policy, never in the log's data folder). A log shorter than its anchor, or whose entry at the
anchor is another, was cut; a log without its anchor or key, or an anchor without its log, was
tampered with.

The file is private to the user (0600). Appends take a lock in the seal folder, so servers in
several processes share one log, and the spending limits counted from it (`budget`) hold across them.
Every append checks the whole log first and refuses to write on a broken one, so an append can never
hide a cut by moving the anchor.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yieldcli.errors import ConfigError, Refused
from yieldcli.files import (
    Unsafe,
    open_checked,
    others_can_change,
    read_checked,
    read_fd,
    take_file_lock,
    write_atomically,
)

GENESIS = "0" * 64
DAY = 24 * 3600
HOUR = 3600
AUDIT_HINT = (
    "`yield mcp audit` shows the log and what is wrong; keep a copy, then move the log and the seal's "
    "anchor file away (docs/manual/agents.md): a new log starts at the next start"
)


@dataclass
class Snapshot:
    """One read of the log, through one checked descriptor: what is wrong with it (None: whole and as
    long as its anchor), its entries and their bytes. Whatever is decided from the log (the chain, the
    limits, what is shown) is decided from one of these, never from a second read."""

    problem: str | None
    entries: list[dict[str, Any]] = field(default_factory=list)
    data: bytes = b""
    fd: int | None = None  # under the lock: the open log, where the next entry is appended


def default_audit(data_dir: Path, config_dir: Path) -> AuditLog:
    """The log in the data folder; its key and anchor in the config folder, beside the policy."""
    return AuditLog(data_dir / "mcp-audit.jsonl", config_dir / "mcp-audit-seal")


class AuditLog:
    def __init__(self, path: Path, seal: Path, clock: Any = time.time):
        self.path = path
        self.seal = seal
        self._clock = clock
        self._key_cache: bytes | None = None
        # What this process already checked: (entries, bytes, SHA-256 of those bytes). A longer log that
        # starts with the very same bytes needs only its new entries checked, so an append costs a hash
        # of the file, not a keyed hash of every entry ever written.
        self._checked: tuple[int, int, str] = (0, 0, hashlib.sha256(b"").hexdigest())
        self._held: dict[int, Snapshot | None] = {}  # by thread holding the lock: the log as read under it

    # --- where the files are ----------------------------------------------------------------------

    def check_places(self) -> None:
        """Refuse a log or seal that others could change, judged where they really are (the folders'
        symlinks resolved, every folder above); from here on the real folders are used. The log's own
        name is never followed: a symlink, FIFO or hard link there is refused now, and at every use."""
        for folder in (self.path.parent, self.seal):
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = Path(os.path.realpath(self.path.parent)) / self.path.name
        self.seal = Path(os.path.realpath(self.seal))
        for what, target in (("audit log's folder", self.path.parent), ("audit log's seal folder", self.seal)):
            problem = others_can_change(target)
            if problem is not None:
                which, why, where = problem
                raise ConfigError(
                    f"the {what} {target}: {'it' if which == 'file' else where} {why}: refusing to start",
                    kind="config.audit",
                )
        try:
            fd = open_checked(self.path)
        except (Unsafe, OSError) as exc:
            raise ConfigError(
                f"the audit log {self.path} {_why(exc)}: refusing to start", kind="config.audit"
            ) from None
        if fd is not None:
            os.close(fd)

    @property
    def _anchor_path(self) -> Path:
        return self.seal / "anchor.json"

    def _key(self, create: bool) -> bytes | None:
        if self._key_cache is not None:
            return self._key_cache
        path = self.seal / "key"
        try:
            found = read_checked(path, follow=False, limit=4096)
            if found is None and create:
                self.seal.mkdir(parents=True, exist_ok=True, mode=0o700)
                os.chmod(self.seal, 0o700)
                write_atomically(path, secrets.token_hex(32) + "\n")  # 0600
                found = read_checked(path, follow=False, limit=4096)
            if found is None:
                return None
            text = found[0].decode("ascii").strip()
            if os.stat(path, follow_symlinks=False).st_mode & 0o077:
                raise ConfigError(f"the audit log's key {path} can be read by others", kind="config.audit")
        except (Unsafe, OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"the audit log's key {path} {_why(exc)}", kind="config.audit") from None
        try:
            self._key_cache = bytes.fromhex(text)
        except ValueError:
            raise ConfigError(f"the audit log's key {path} is damaged", kind="config.audit") from None
        return self._key_cache

    def _digest(self, entry: dict[str, Any], key: bytes) -> str:
        body = json.dumps(
            {k: v for k, v in entry.items() if k != "hash"}, sort_keys=True, separators=(",", ":"), ensure_ascii=True
        )
        return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()

    # --- writing ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the log's lock: what is read and appended inside is one step for every process. It lives
        in the seal folder, beside the key: whoever can write the log's folder could delete a lock file
        there, and every server after would lock a new file of its own. Inside, the log is opened once
        (on first use) and everything read or appended goes through that one descriptor."""
        fd = take_file_lock(self.seal / "audit.lock")
        me = threading.get_ident()
        self._held[me] = None
        try:
            yield
        finally:
            held = self._held.pop(me, None)
            if held is not None and held.fd is not None:
                os.close(held.fd)
            os.close(fd)

    def append(self, event: str, **data: Any) -> dict[str, Any]:
        with self.locked():
            return self.append_locked(event, **data)

    def append_locked(self, event: str, **data: Any) -> dict[str, Any]:
        """Append one entry, then move the anchor to it; the caller holds `locked()`. A log found
        altered, or that is no regular file of ours, takes nothing more (Refused `refused.audit`)."""
        seen = self.snapshot(locked=True)
        fresh = seen.fd is None and not seen.entries and self._anchor() is None
        try:
            key = self._key(create=fresh)
        except ConfigError as exc:
            seen.problem = seen.problem or exc.message
            key = None
        if seen.problem is not None or key is None:
            raise self._altered(seen.problem or "its key is missing")
        prev = seen.entries[-1]["hash"] if seen.entries else GENESIS
        entry = {"seq": len(seen.entries) + 1, "time": round(self._clock(), 3), "event": event, **data, "prev": prev}
        entry["hash"] = self._digest(entry, key)
        line = (json.dumps(entry, ensure_ascii=True, separators=(",", ":")) + "\n").encode()
        if seen.fd is None:  # a new log: made here, never through a name that appeared meanwhile
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                seen.fd = open_checked(self.path, os.O_RDWR | os.O_APPEND, create=True)
                if seen.fd is None:
                    raise FileNotFoundError(2, "its folder is gone")
            except (Unsafe, OSError) as exc:
                seen.problem = f"it {_why(exc)}"
                raise self._altered(seen.problem) from None
        os.write(seen.fd, line)
        os.fsync(seen.fd)
        seen.entries.append(entry)
        seen.data += line
        self._checked = (len(seen.entries), len(seen.data), hashlib.sha256(seen.data).hexdigest())
        # After the line: a crash between the two leaves a log one keyed entry past its anchor, which
        # only `yield` could have written; the other order would leave an anchor past its log.
        write_atomically(self._anchor_path, json.dumps({"seq": entry["seq"], "hash": entry["hash"]}) + "\n")
        return entry

    def _altered(self, problem: str) -> Refused:
        return Refused(
            f"the audit log {self.path} was altered ({problem}): nothing more is written to it and nothing is signed",
            hint=AUDIT_HINT,
            kind="refused.audit",
        )

    # --- reading ----------------------------------------------------------------------------------

    def entries(self) -> list[dict[str, Any]]:
        """Every whole entry of a log whose check passed on these very bytes (Refused `refused.audit`
        otherwise). A last line without its newline is an append still being written by another
        server or thread (a read outside the lock), so it is not read yet."""
        seen = self.snapshot()
        if seen.problem is not None:
            raise self._altered(seen.problem)
        return seen.entries

    def verify(self, *, locked: bool = False) -> str | None:
        """None when the log is whole and as long as its anchor says, else what is wrong. `locked`:
        the caller holds the lock, so nobody is writing and a line cut short is damage."""
        return self.snapshot(locked=locked).problem

    def snapshot(self, *, locked: bool = False) -> Snapshot:
        """The log read once and checked: under the lock (`locked`, by this thread), the one read of
        the lock's hold, kept open for the appends; otherwise a read of its own, closed after."""
        me = threading.get_ident()
        held = self._held.get(me)
        if held is not None:
            return held
        keep = locked and me in self._held
        try:
            fd = open_checked(self.path, os.O_RDWR | os.O_APPEND if keep else os.O_RDONLY)
        except (Unsafe, OSError) as exc:
            seen = Snapshot(f"it {_why(exc)}")
        else:
            seen = Snapshot(None, fd=fd)
            try:
                seen.problem = self._problem(seen, locked)
            finally:
                if fd is not None and not keep:
                    os.close(fd)
                    seen.fd = None
        if keep:
            self._held[me] = seen
        return seen

    def _read(self, fd: int | None) -> tuple[list[dict[str, Any]], bool, bytes]:
        """The whole entries, whether a line without its newline follows them, and their bytes."""
        if fd is None:
            return [], False, b""
        try:
            data = read_fd(fd)
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"the audit log {self.path} {_why(exc)}", kind="config.audit") from None
        whole, _, tail = text.rpartition("\n")  # one append is one write of a line and its newline
        entries = []
        for number, line in enumerate(whole.split("\n") if whole else (), 1):
            try:
                entry = json.loads(line)
            except ValueError:
                raise ConfigError(
                    f"the audit log {self.path} is damaged at line {number}", kind="config.audit"
                ) from None
            if not isinstance(entry, dict):
                raise ConfigError(f"the audit log {self.path} is damaged at line {number}", kind="config.audit")
            entries.append(entry)
        return entries, bool(tail), data[: len(data) - len(tail.encode("utf-8"))]

    def _anchor(self) -> tuple[int, str] | None:
        try:
            found = read_checked(self._anchor_path, follow=False, limit=4096)
            if found is None:
                return None
            body = json.loads(found[0].decode("utf-8"))
            return int(body["seq"]), str(body["hash"])
        except (Unsafe, OSError, ValueError, KeyError, TypeError):
            return -1, ""  # unreadable or not a file of ours: never matches

    def _problem(self, seen: Snapshot, locked: bool) -> str | None:
        try:
            anchor = self._anchor()  # before the log: appends move the log first, the anchor after
            entries, torn, data = self._read(seen.fd)
            seen.entries, seen.data = entries, data
            key = self._key(create=False)
        except ConfigError as exc:
            return exc.message
        if torn and locked:
            return f"entry {len(entries) + 1} is cut short"
        if key is None:
            return "its key is missing" if entries or anchor is not None else None
        if anchor is None:
            return "its anchor is missing" if entries else None
        start, size, digest = self._checked
        if not (len(entries) >= start and hashlib.sha256(data[:size]).hexdigest() == digest):
            start = 0  # changed under us: everything is checked again (and found altered)
        prev = entries[start - 1]["hash"] if start else GENESIS
        for number, entry in enumerate(entries[start:], start + 1):
            if entry.get("prev") != prev or entry.get("seq") != number:
                return f"the chain breaks at entry {number}"
            if not hmac.compare_digest(str(entry.get("hash")), self._digest(entry, key)):
                return f"entry {number} was not written by yield (its keyed hash is wrong)"
            prev = entry["hash"]
        seq, head = anchor
        if seq < 0:
            return "its anchor is damaged"
        if len(entries) < seq:
            return f"it has {len(entries)} entries where its anchor says {seq}: entries were cut or deleted"
        if seq > 0 and entries[seq - 1]["hash"] != head:
            return f"entry {seq} is not the one its anchor holds"
        self._checked = (len(entries), len(data), hashlib.sha256(data).hexdigest())
        return None

    def budget(self, mint: str) -> tuple[int, int, int]:
        """(base units of `mint` reserved in 24 h, of which automatic, writes in the last hour);
        a reservation counts until `yield` released it after its reservation (nothing was sent, or
        the transaction failed or expired: the outcome the chain showed)."""
        now = self._clock()
        reserved_at: dict[Any, int] = {}
        released: set[Any] = set()
        entries = self.entries()
        for number, entry in enumerate(entries):
            if entry.get("event") == "reserved":
                reserved_at.setdefault(entry.get("proposal"), number)
            elif entry.get("event") == "released" and entry.get("proposal") in reserved_at:
                released.add(entry.get("proposal"))
        day = auto = writes = 0
        for entry in entries:
            if entry.get("event") != "reserved" or entry.get("proposal") in released:
                continue
            age = now - float(entry.get("time", 0))
            if age < HOUR:
                writes += 1
            if age < DAY and entry.get("mint") == mint:
                raw = int(entry.get("raw", 0))
                day += raw
                auto += raw if entry.get("automatic") else 0
        return day, auto, writes


def _why(exc: BaseException) -> str:
    """What is wrong with a file, to follow its name: what `Unsafe` says, or the system's reason."""
    if isinstance(exc, Unsafe):
        return exc.why
    if isinstance(exc, UnicodeDecodeError):
        return "is not text"
    return f"cannot be read: {getattr(exc, 'strerror', None) or type(exc).__name__}"
