"""The audit log: every proposal, decision and execution, one JSON line each, chained by hash.

Each entry carries `prev`, the hash of the entry before it, and `hash`, the SHA-256 of its own
canonical JSON without `hash`: removing, reordering or editing a line breaks the chain from there on.
The file is private to the user (0600). Appends take a lock on a file beside it, so servers in
several processes share one log, and the spending limits counted from it (`budget`) hold across them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from yieldcli.errors import ConfigError
from yieldcli.files import take_file_lock

GENESIS = "0" * 64
DAY = 24 * 3600
HOUR = 3600


def default_audit_path(data_dir: Path) -> Path:
    return data_dir / "mcp-audit.jsonl"


def _digest(entry: dict[str, Any]) -> str:
    body = json.dumps(
        {k: v for k, v in entry.items() if k != "hash"}, sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )
    return hashlib.sha256(body.encode()).hexdigest()


class AuditLog:
    def __init__(self, path: Path, clock: Any = time.time):
        self.path = path
        self._clock = clock

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the log's lock: what is read and appended inside is one step for every process."""
        fd = take_file_lock(self.path.with_name(f".{self.path.name}.lock"))
        try:
            yield
        finally:
            os.close(fd)

    def append(self, event: str, **data: Any) -> dict[str, Any]:
        with self.locked():
            return self.append_locked(event, **data)

    def append_locked(self, event: str, **data: Any) -> dict[str, Any]:
        """Append one entry; the caller holds `locked()`."""
        entries, torn = self._read()
        if torn:  # under the lock nobody is writing: a writer stopped mid-line, and more would bury it
            raise ConfigError(
                f"the audit log {self.path} is damaged at line {len(entries) + 1} (cut short)",
                hint="`yield mcp audit` shows the log; keep a copy and move it away to start a new one",
                kind="config.audit",
            )
        prev = entries[-1]["hash"] if entries else GENESIS
        entry = {"seq": len(entries) + 1, "time": round(self._clock(), 3), "event": event, **data, "prev": prev}
        entry["hash"] = _digest(entry)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, (json.dumps(entry, ensure_ascii=True, separators=(",", ":")) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        return entry

    def entries(self) -> list[dict[str, Any]]:
        """Every whole entry. A last line without its newline is an append still being written by
        another server or thread (a read does not take the lock), so it is not read yet."""
        return self._read()[0]

    def _read(self) -> tuple[list[dict[str, Any]], bool]:
        """The whole entries, and whether a line without its newline follows them."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return [], False
        except OSError as exc:
            raise ConfigError(f"cannot read the audit log {self.path}: {exc.strerror}", kind="config.audit") from None
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
        return entries, bool(tail)

    def verify(self) -> str | None:
        """None when the chain is whole, else where it breaks."""
        prev = GENESIS
        for number, entry in enumerate(self.entries(), 1):
            if entry.get("prev") != prev or entry.get("hash") != _digest(entry) or entry.get("seq") != number:
                return f"the chain breaks at entry {number}"
            prev = entry["hash"]
        return None

    def budget(self, mint: str) -> tuple[int, int, int]:
        """(base units of `mint` reserved in 24 h, of which automatic, writes in the last hour);
        a reservation counts until it is released (nothing was sent, or it failed or expired)."""
        now = self._clock()
        entries = self.entries()
        released = {e.get("proposal") for e in entries if e.get("event") == "released"}
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
