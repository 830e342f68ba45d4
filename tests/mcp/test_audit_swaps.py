"""The audit log swapped at each moment between a check and its use, in the server's own process (the
swap is made by a hook around the step it follows): a symlink, a FIFO, a hard link or another file put
in its place. Judged by the bytes on disk: nothing is written anywhere but the log `yield` opened, the
limits and what is shown come from the bytes that were checked, and nothing ever waits."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tests.mcp.harness import bounded
from yieldcli.errors import Refused
from yieldcli.mcp import audit as audit_module
from yieldcli.mcp.audit import AuditLog

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"


@pytest.fixture
def log(tmp_path) -> AuditLog:
    log = AuditLog(tmp_path / "data" / "mcp-audit.jsonl", tmp_path / "config" / "seal")
    log.check_places()
    log.append("reserved", proposal="p1", mint=USDC, raw=20_000_000, automatic=False)
    return log


@pytest.fixture
def shell_file(tmp_path) -> Path:
    """A file outside the data folder that must never change (a shell's start-up file)."""
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# the person's shell\n")
    return path


def swap_symlink(log: AuditLog, target: Path) -> None:
    temporary = log.path.with_name("swap")
    temporary.symlink_to(target)
    os.replace(temporary, log.path)


def swap_hard_link(log: AuditLog, target: Path) -> None:
    temporary = log.path.with_name("swap")
    os.link(target, temporary)
    os.replace(temporary, log.path)


def swap_fifo(log: AuditLog, target: Path) -> None:
    temporary = log.path.with_name("swap")
    os.mkfifo(temporary, 0o600)
    os.replace(temporary, log.path)


def swap_empty(log: AuditLog, target: Path) -> None:
    """Another file of the right kind, but empty: the limits would count nothing from it."""
    temporary = log.path.with_name("swap")
    temporary.write_text("")
    os.chmod(temporary, 0o600)
    os.replace(temporary, log.path)


SWAPS = {"symlink": swap_symlink, "hard-link": swap_hard_link, "fifo": swap_fifo, "empty": swap_empty}
# The steps a swap may follow, by the name the log module calls them by.
MOMENTS = ("open_checked", "read_fd", "_key", "_anchor")


def hook_after(monkeypatch, name: str, swap) -> list[bool]:
    """Swap the log right after the first call of `name` in the log module returns."""
    real = getattr(audit_module, name) if hasattr(audit_module, name) else getattr(AuditLog, name)
    swapped: list[bool] = []

    def after(*args, **kwargs):
        result = real(*args, **kwargs)
        if not swapped:
            swapped.append(True)
            swap()
        return result

    if hasattr(audit_module, name):
        monkeypatch.setattr(audit_module, name, after)
    else:
        monkeypatch.setattr(AuditLog, name, after)
    return swapped


@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("swap", SWAPS.values(), ids=SWAPS.keys())
def test_an_append_writes_only_to_the_log_it_checked_and_counts_from_those_bytes(
    log, shell_file, monkeypatch, moment, swap
):
    """Whatever is swapped in, at whichever moment: the shell's file keeps its bytes, the reservation
    counted is the one read (20 USDC), the new entry lands in the log that was checked, and the next
    read of what is there now is a refusal naming the path, at once."""
    before = shell_file.read_bytes()
    original = os.open(log.path, os.O_RDONLY)  # the log yield opened, wherever its name goes
    try:

        def step():
            with log.locked():
                log.verify(locked=True)
                counted = log.budget(USDC)[0]
                log.append_locked("reserved", proposal="p2", mint=USDC, raw=1, automatic=True)
                return counted

        swapped = hook_after(monkeypatch, moment, lambda: swap(log, shell_file))
        try:
            counted = bounded(step)
        except Refused as exc:  # the swap was seen before the append: nothing written at all
            assert exc.kind == "refused.audit" and str(log.path) in exc.message, exc.message
            counted = None
        monkeypatch.undo()
        assert swapped, f"{moment} was never reached"
        assert shell_file.read_bytes() == before
        written = os.pread(original, 1 << 20, 0).decode()
        lines = [json.loads(line) for line in written.splitlines()]
        if counted is not None:
            assert counted == 20_000_000  # counted from the bytes checked, never from the empty swap
            assert [e["proposal"] for e in lines] == ["p1", "p2"]
        else:
            assert [e["proposal"] for e in lines] == ["p1"]
        problem = bounded(log.verify)
        assert problem is not None, "the file swapped in was taken as the log"
        with pytest.raises(Refused) as refused:
            bounded(lambda: log.budget(USDC))
        assert refused.value.kind == "refused.audit" and str(log.path) in refused.value.message
    finally:
        os.close(original)


@pytest.mark.parametrize("swap", SWAPS.values(), ids=SWAPS.keys())
def test_a_log_replaced_before_start_is_refused_at_start_and_never_written_through(tmp_path, shell_file, swap):
    path = tmp_path / "data" / "mcp-audit.jsonl"
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_text("")
    log = AuditLog(path, tmp_path / "config" / "seal")
    before = shell_file.read_bytes()
    swap(log, shell_file)
    if swap is swap_empty:  # an empty regular file of ours is a fresh log
        bounded(log.check_places)
        return
    from yieldcli.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        bounded(log.check_places)
    assert str(path) in refused.value.message, refused.value.message
    with pytest.raises(Refused):
        bounded(lambda: log.append("prepare"))
    assert shell_file.read_bytes() == before


def test_a_dangling_symlink_on_a_fresh_log_creates_nothing_where_it_points(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    profile = tmp_path / "home" / ".bash_profile"
    profile.parent.mkdir(exist_ok=True)
    (data / "mcp-audit.jsonl").symlink_to(profile)
    log = AuditLog(data / "mcp-audit.jsonl", tmp_path / "config" / "seal")
    from yieldcli.errors import ConfigError

    with pytest.raises(ConfigError) as refused:
        log.check_places()
    assert "symbolic link" in refused.value.message and str(data / "mcp-audit.jsonl") in refused.value.message
    with pytest.raises(Refused):
        log.append("prepare", intent={"action": "deposit", "asset": "echo pwned"})
    assert not profile.exists()


def test_a_fifo_fed_the_real_log_serves_neither_the_check_nor_the_count(log):
    """The attack of issue 36: a FIFO that hands every reader the real log's bytes. It is no regular
    file: the chain check and the budget refuse it, with its path, and nothing waits on it."""
    real = log.path.read_bytes()
    log.path.unlink()
    os.mkfifo(log.path, 0o600)
    stop = threading.Event()

    def feed():
        while not stop.is_set():
            try:
                fd = os.open(log.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                stop.wait(0.01)
                continue
            try:
                os.write(fd, real)
            except OSError:
                pass
            os.close(fd)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        problem = bounded(log.verify)
        assert problem is not None and "named pipe" in problem, problem
        with pytest.raises(Refused) as refused:
            bounded(lambda: log.budget(USDC))
        assert str(log.path) in refused.value.message and "named pipe" in refused.value.message
        with pytest.raises(Refused):
            bounded(lambda: log.append("prepare"))
        with pytest.raises(Refused):
            bounded(log.entries)
    finally:
        stop.set()
        feeder.join(5)
