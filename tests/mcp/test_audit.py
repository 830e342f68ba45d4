"""The audit log against whoever can write its file but not `yield`'s seal (its key and anchor): every
edit, cut, reorder, deletion or extension is found, forged hashes and releases included, and a log found
altered takes no more entries (so no append can move the anchor over a cut)."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from yieldcli.errors import Refused
from yieldcli.mcp.audit import AuditLog

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"


@pytest.fixture
def log(tmp_path) -> AuditLog:
    log = AuditLog(tmp_path / "data" / "audit.jsonl", tmp_path / "config" / "seal")
    log.check_places()
    log.append("prepare", intent={"action": "deposit"})
    log.append("reserved", proposal="a", mint=USDC, raw=6_000_000, automatic=False)
    log.append("outcome", proposal="a", status="confirmed")
    log.append("reserved", proposal="b", mint=USDC, raw=4_000_000, automatic=False)
    log.append("outcome", proposal="b", status="confirmed")
    return log


def lines(log: AuditLog) -> list[dict]:
    return [json.loads(line) for line in log.path.read_text().splitlines()]


def write(log: AuditLog, entries: list[dict]) -> None:
    log.path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries))


def rechained(entries: list[dict]) -> list[dict]:
    """What someone without the key can do: renumber and recompute every hash, SHA-256 as before."""
    prev = "0" * 64
    for seq, entry in enumerate(entries, 1):
        entry.update(seq=seq, prev=prev)
        body = json.dumps({k: v for k, v in entry.items() if k != "hash"}, sort_keys=True, separators=(",", ":"))
        entry["hash"] = prev = hashlib.sha256(body.encode()).hexdigest()
    return entries


def forged_release(entries: list[dict], proposal: str) -> list[dict]:
    last = entries[-1]
    return [*entries, {"seq": last["seq"] + 1, "time": last["time"], "event": "released", "proposal": proposal}]


ATTACKS = {
    "edit": lambda e: [*e[:1], {**e[1], "raw": 1}, *e[2:]],
    "edit, hashes recomputed": lambda e: rechained([*e[:1], {**e[1], "raw": 1}, *e[2:]]),
    "cut at the end": lambda e: e[:3],
    "cut, the last entry forged to match": lambda e: rechained(e[:3]),
    "reorder": lambda e: [e[0], e[3], e[2], e[1], e[4]],
    "reorder, hashes recomputed": lambda e: rechained([e[0], e[3], e[2], e[1], e[4]]),
    "one entry deleted": lambda e: [*e[:1], *e[2:]],
    "one entry deleted, hashes recomputed": lambda e: rechained([*e[:1], *e[2:]]),
    "forged release": lambda e: forged_release(e, "a"),
    "forged release, hashes recomputed": lambda e: rechained(forged_release(e, "a")),
    "emptied": lambda e: [],
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_every_change_to_the_log_is_found_and_it_takes_no_more_entries(log, attack):
    assert log.verify() is None and log.budget(USDC)[0] == 10_000_000
    write(log, ATTACKS[attack](lines(log)))
    problem = log.verify()
    assert problem is not None, attack
    with pytest.raises(Refused, match="was altered"):
        log.append("prepare", intent={"action": "deposit"})


def test_the_log_deleted_is_found(log):
    os.remove(log.path)
    assert "has 0 entries where its anchor says 5: entries were cut or deleted" in log.verify()


def test_a_missing_anchor_or_key_is_found_and_a_fresh_start_is_not_a_problem(tmp_path, log):
    anchor = log.seal / "anchor.json"
    saved = anchor.read_text()
    os.remove(anchor)
    assert log.verify() == "its anchor is missing"
    anchor.write_text(saved)
    other = AuditLog(log.path, tmp_path / "elsewhere")  # a seal without the key: nothing can be checked
    assert other.verify() == "its key is missing"
    fresh = AuditLog(tmp_path / "new" / "audit.jsonl", tmp_path / "new-seal")
    assert fresh.verify() is None
    fresh.append("prepare", intent={})
    assert fresh.verify() is None
    assert oct(os.stat(fresh.seal / "key").st_mode & 0o777) == "0o600"
    assert not any(p.name == "key" for p in fresh.path.parent.iterdir())  # the log's folder holds no key


def test_entries_appended_by_yield_past_the_anchor_are_whole(log):
    """A crash between the line and the anchor leaves the log one keyed entry ahead: only `yield` could
    have written it, so it is no alteration (and the next append moves the anchor on)."""
    anchor = (log.seal / "anchor.json").read_text()
    log.append("prepare", intent={"action": "withdraw"})
    (log.seal / "anchor.json").write_text(anchor)
    assert log.verify() is None
    log.append("prepare", intent={"action": "withdraw"})
    assert json.loads((log.seal / "anchor.json").read_text())["seq"] == 7


def test_a_release_counts_only_after_its_reservation(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl", tmp_path / "seal")
    log.append("released", proposal="a", why="expired")  # before any reservation: frees nothing
    log.append("reserved", proposal="a", mint=USDC, raw=5, automatic=True)
    assert log.budget(USDC)[0] == 5
    log.append("released", proposal="a", why="expired")
    assert log.budget(USDC)[0] == 0


def test_the_lock_is_in_the_seal_folder_not_where_the_log_folders_writers_could_delete_it(log, tmp_path):
    import fcntl

    with log.locked():
        assert not [f for f in (tmp_path / "data").iterdir() if f.name.endswith(".lock")]
        fd = os.open(log.seal / "audit.lock", os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):  # another server waits for it
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
