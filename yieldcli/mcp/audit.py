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
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from yieldcli.errors import ConfigError, Refused
from yieldcli.files import others_can_change, take_file_lock, write_atomically

GENESIS = "0" * 64
DAY = 24 * 3600
HOUR = 3600
AUDIT_HINT = (
    "`yield mcp audit` shows the log and what is wrong; keep a copy, then move the log and the seal's "
    "anchor file away (docs/manual/agents.md): a new log starts at the next start"
)


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

    # --- where the files are ----------------------------------------------------------------------

    def check_places(self) -> None:
        """Refuse a log or seal that others could change, judged where they really are (symlinks
        resolved, every folder above); from here on the real paths are used."""
        for folder in (self.path.parent, self.seal):
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = Path(os.path.realpath(self.path))
        self.seal = Path(os.path.realpath(self.seal))
        for what, target in (("audit log", self.path), ("audit log's seal folder", self.seal)):
            if not target.exists():
                target = target.parent
            problem = others_can_change(target)
            if problem is not None:
                which, why, where = problem
                raise ConfigError(
                    f"the {what} {target}: {'it' if which == 'file' else where} {why}: refusing to start",
                    kind="config.audit",
                )

    @property
    def _anchor_path(self) -> Path:
        return self.seal / "anchor.json"

    def _key(self, create: bool) -> bytes | None:
        if self._key_cache is not None:
            return self._key_cache
        path = self.seal / "key"
        try:
            text = path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            if not create:
                return None
            self.seal.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(self.seal, 0o700)
            write_atomically(path, secrets.token_hex(32) + "\n")  # 0600
            text = path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the audit log's key {path}: {exc}", kind="config.audit") from None
        if os.stat(path).st_mode & 0o077:
            raise ConfigError(f"the audit log's key {path} can be read by others", kind="config.audit")
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
        there, and every server after would lock a new file of its own."""
        fd = take_file_lock(self.seal / "audit.lock")
        try:
            yield
        finally:
            os.close(fd)

    def append(self, event: str, **data: Any) -> dict[str, Any]:
        with self.locked():
            return self.append_locked(event, **data)

    def append_locked(self, event: str, **data: Any) -> dict[str, Any]:
        """Append one entry, then move the anchor to it; the caller holds `locked()`. A log found
        altered takes nothing more (Refused `refused.audit`)."""
        fresh = not self.path.exists() and not self._anchor_path.exists()
        key = self._key(create=fresh)
        broken, entries = self._verify(locked=True)
        if broken is not None or key is None:
            raise Refused(
                f"the audit log {self.path} was altered ({broken or 'its key is missing'}): nothing more is "
                "written to it and nothing is signed",
                hint=AUDIT_HINT,
                kind="refused.audit",
            )
        prev = entries[-1]["hash"] if entries else GENESIS
        entry = {"seq": len(entries) + 1, "time": round(self._clock(), 3), "event": event, **data, "prev": prev}
        entry["hash"] = self._digest(entry, key)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, (json.dumps(entry, ensure_ascii=True, separators=(",", ":")) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        # After the line: a crash between the two leaves a log one keyed entry past its anchor, which
        # only `yield` could have written; the other order would leave an anchor past its log.
        write_atomically(self._anchor_path, json.dumps({"seq": entry["seq"], "hash": entry["hash"]}) + "\n")
        return entry

    # --- reading ----------------------------------------------------------------------------------

    def entries(self) -> list[dict[str, Any]]:
        """Every whole entry. A last line without its newline is an append still being written by
        another server or thread (a read does not take the lock), so it is not read yet."""
        return self._read()[0]

    def _read(self) -> tuple[list[dict[str, Any]], bool, bytes]:
        """The whole entries, whether a line without its newline follows them, and their bytes."""
        try:
            data = self.path.read_bytes()
            text = data.decode("utf-8")
        except FileNotFoundError:
            return [], False, b""
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the audit log {self.path}: {exc}", kind="config.audit") from None
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
            body = json.loads(self._anchor_path.read_text(encoding="utf-8"))
            return int(body["seq"]), str(body["hash"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            return -1, ""  # unreadable: never matches

    def verify(self, *, locked: bool = False) -> str | None:
        """None when the log is whole and as long as its anchor says, else what is wrong. `locked`:
        the caller holds the lock, so nobody is writing and a line cut short is damage."""
        return self._verify(locked)[0]

    def _verify(self, locked: bool) -> tuple[str | None, list[dict[str, Any]]]:
        """What `verify` says, and the entries it read (an append needs them too)."""
        entries: list[dict[str, Any]] = []
        return self._problem(locked, entries), entries

    def _problem(self, locked: bool, found: list[dict[str, Any]]) -> str | None:
        try:
            anchor = self._anchor()  # before the log: appends move the log first, the anchor after
            entries, torn, data = self._read()
            found.extend(entries)
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
