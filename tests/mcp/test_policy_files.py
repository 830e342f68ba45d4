"""The policy file read afresh, by its path, for every decision: changed by rename-over, by a symlink
re-pointed (as dotfile managers do), edited in place, or swapped between its resolution and its open,
`kill_switch = true` stops the next write; whatever cannot be read or trusted stops writes too; a
policy with a second name is refused. Nothing waits on a FIFO."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.mcp.harness import POLICY, bounded, write_private
from yieldcli import files
from yieldcli.errors import ConfigError
from yieldcli.mcp.policy import kill_switch_now, load_policy

KILLED = "kill_switch = true\n" + POLICY


def rename_over(link: Path, text: str) -> None:
    fresh = write_private(link.parent / ".policy.new", text)
    os.replace(fresh, link)


def repoint(link: Path, text: str) -> None:
    """What stow or home-manager do: a new target, and the link replaced by one that points to it."""
    target = write_private(link.parent / "generations" / f"policy-{len(os.listdir(link.parent))}.toml", text)
    temporary = link.parent / ".link.new"
    temporary.symlink_to(target)
    os.replace(temporary, link)


def edit_in_place(link: Path, text: str) -> None:
    with open(os.path.realpath(link), "r+") as out:
        out.truncate(0)
        out.write(text)


@pytest.fixture
def linked(tmp_path) -> Path:
    """A policy reached through a symlink, as a dotfile manager installs it."""
    target = write_private(tmp_path / "config" / "generations" / "policy-0.toml", POLICY)
    link = tmp_path / "config" / "mcp-policy.toml"
    link.symlink_to(target)
    return link


@pytest.mark.parametrize("change", [rename_over, repoint, edit_in_place], ids=["rename-over", "re-pointed", "in-place"])
def test_the_kill_switch_stops_the_next_write_however_the_file_was_changed(linked, change):
    policy = load_policy(linked, required=True)
    assert kill_switch_now(policy) is None
    change(linked, KILLED)
    assert kill_switch_now(policy) == "the policy's kill switch is on"
    change(linked, POLICY.replace("writes = true", "writes = false"))
    assert kill_switch_now(policy) == "writes are off in the policy now"


def test_a_policy_re_pointed_to_something_that_fails_its_checks_stops_writes(linked, tmp_path):
    policy = load_policy(linked, required=True)
    untrusted = write_private(tmp_path / "config" / "generations" / "open.toml", POLICY)
    os.chmod(untrusted, 0o664)
    cases = {
        "can be written by others": untrusted,
        "named pipe": tmp_path / "config" / "generations" / "pipe.toml",
        "hard links": tmp_path / "config" / "generations" / "linked.toml",
        "no policy file": tmp_path / "config" / "generations" / "gone.toml",
    }
    os.mkfifo(cases["named pipe"], 0o600)
    os.link(linked.resolve(), cases["hard links"])
    for why, target in cases.items():
        temporary = linked.with_name(".link.new")
        temporary.symlink_to(target)
        os.replace(temporary, linked)
        stop = bounded(lambda: kill_switch_now(policy))
        assert stop is not None and why in stop, (why, stop)


def test_a_policy_swapped_for_a_symlink_between_its_resolution_and_its_open_is_not_read(linked, tmp_path, monkeypatch):
    """The link is resolved, then the file it named is replaced by a symlink to a looser policy: the
    open does not follow it, and writes stop (the looser file is never read)."""
    policy = load_policy(linked, required=True)
    loose = write_private(tmp_path / "elsewhere" / "loose.toml", POLICY.replace('daily = "100"', 'daily = "100000"'))
    real_open = files.open_checked

    def swap_then_open(path, *args, **kwargs):
        if Path(path).name == "policy-0.toml":
            temporary = Path(path).with_name(".swap")
            temporary.symlink_to(loose)
            os.replace(temporary, path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(files, "open_checked", swap_then_open)
    stop = kill_switch_now(policy)
    assert stop is not None and "symbolic link" in stop, stop


def test_a_policy_with_a_second_hard_link_is_refused_at_start_and_stops_a_running_server(tmp_path):
    path = write_private(tmp_path / "config" / "mcp-policy.toml", POLICY)
    policy = load_policy(path, required=True)
    os.link(path, tmp_path / "config" / "other-name.toml")
    with pytest.raises(ConfigError) as refused:
        load_policy(path, required=True)
    assert "2 hard links" in refused.value.message and str(path) in refused.value.message
    stop = kill_switch_now(policy)
    assert stop is not None and "2 hard links" in stop


def test_a_fifo_as_the_policy_is_refused_at_start_without_waiting(tmp_path):
    path = tmp_path / "config" / "mcp-policy.toml"
    path.parent.mkdir(mode=0o700)
    os.mkfifo(path, 0o600)
    with pytest.raises(ConfigError) as refused:
        bounded(lambda: load_policy(path, required=True))
    assert "named pipe" in refused.value.message
