"""Issue 36, through the official MCP client against `yield mcp` over stdio and the sandbox's chain: the
agent's file tools write in `yield`'s data folder (the agents page allows it) and put a FIFO, a symlink
or a hard link where the audit log or the send journal is, at start or between two calls; the person
declines every question. Judged by the chain (the wallet's USDC) and the bytes on disk; every call is
bounded in time, so a wait on a FIFO fails the test instead of hanging it."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import anyio
import pytest

from tests.conftest import YIELD
from tests.mcp.harness import POLICY, answering, server_env, session, structured, write_private
from tests.mcp.test_server_attacks import audit_path, usdc

BOUND = 90  # seconds for one whole conversation with the server: far above a normal one
# Up to 6 USDC a call and 10 a day without asking; never more than 10 a day even with a yes.
TIGHT = POLICY.replace('auto_per_call = "2"', 'auto_per_call = "6"').replace('daily = "100"', 'daily = "10"')
DECLINE = answering("decline")


@pytest.fixture
def env(sandbox, isolated):
    return server_env(sandbox, isolated)


def journal_path(home: Path) -> Path:
    return home / ".local" / "share" / "yield" / "in-flight.json"


def shell_files(home: Path) -> dict[Path, bytes]:
    """The person's shell start-up files: what an append through a link would turn into code."""
    found = {}
    for name in (".bashrc", ".bash_profile"):
        path = home / name
        if name == ".bashrc":
            path.write_text("# the person's shell\n")
        found[path] = path.read_bytes() if path.exists() else b"(absent)"
    return found


def unchanged(files: dict[Path, bytes]) -> bool:
    return all((path.read_bytes() if path.exists() else b"(absent)") == before for path, before in files.items())


def converse(body):
    async def bounded():
        with anyio.fail_after(BOUND):
            return await body()

    return anyio.run(bounded)


def mcp_audit(env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [YIELD, "mcp", "audit"], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
    )


def error(answer) -> dict:
    assert answer.is_error, answer
    return structured(answer)["error"]


def put_fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path, 0o600)


@pytest.mark.parametrize("which", ["log", "journal"])
def test_a_fifo_as_the_log_or_the_journal_is_a_refusal_naming_it_never_a_wait(env, isolated, sandbox, which):
    policy = write_private(isolated / "policy" / "p.toml", TIGHT)
    before = usdc(sandbox)
    target = audit_path(isolated) if which == "log" else journal_path(isolated)

    async def body():
        async with session(env, "--policy", str(policy), elicit=DECLINE) as client:
            first = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
            put_fifo(target)  # nobody writes it: a read that waits never returns
            again = await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"})
            executed = await client.call_tool("execute", {"proposal_id": first["proposal_id"]})
            shown = json.loads((await client.read_resource("yield://audit")).contents[0].text)
            return again, executed, shown

    again, executed, shown = converse(body)
    if which == "log":
        for answer in (again, executed):
            assert error(answer)["kind"] == "refused.audit" and str(target) in error(answer)["message"]
            assert "named pipe" in error(answer)["message"]
        assert shown["entries"] == [] and "named pipe" in shown["chain"] and str(target) in shown["chain"], shown
        audited = mcp_audit(env)
        assert audited.returncode == 3 and str(target) in audited.stderr and audited.stdout == "", audited
    else:
        assert not again.is_error  # a prepare sends nothing: the journal is not read for it
        assert str(target) in error(executed)["message"] and "named pipe" in error(executed)["message"]
    assert usdc(sandbox) == before


def test_a_fifo_serving_the_real_log_to_the_check_and_an_empty_one_to_the_budget_gives_nothing_back(
    env, isolated, sandbox
):
    """The attack of issue 36: 6 USDC sent of a 10 USDC day; the log becomes a FIFO that serves its real
    bytes and nothing, in turn, to whoever opens it. Nothing more is sent, no question is needed to
    stop it, and `yield mcp audit` does not call it intact."""
    policy = write_private(isolated / "policy" / "p.toml", TIGHT)
    before = usdc(sandbox)
    stop = threading.Event()

    def feed(path: Path, real: bytes):
        turn = 0
        while not stop.is_set():
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                stop.wait(0.005)
                continue
            try:
                os.write(fd, real if turn % 2 == 0 else b"")
            except OSError:
                pass
            os.close(fd)
            turn += 1

    async def body():
        async with session(env, "--policy", str(policy), elicit=DECLINE) as client:
            first = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "6"}))
            sent = structured(await client.call_tool("execute", {"proposal_id": first["proposal_id"]}))
            path = audit_path(isolated)
            real = path.read_bytes()
            put_fifo(path)
            feeder = threading.Thread(target=feed, args=(path, real), daemon=True)
            feeder.start()
            answers = []
            for _ in range(3):
                proposed = await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "6"})
                answers.append(proposed)
                if not proposed.is_error:
                    answers.append(
                        await client.call_tool("execute", {"proposal_id": structured(proposed)["proposal_id"]})
                    )
            return sent, answers

    try:
        sent, answers = converse(body)
        audited = mcp_audit(env)
    finally:
        stop.set()
    assert sent["status"] == "confirmed", sent
    assert usdc(sandbox) == before - 6_000_000  # the chain: nothing past the day's 10 USDC
    for answer in answers:
        assert error(answer)["kind"] == "refused.audit", answer
    assert audited.returncode == 3 and "intact" not in audited.stderr + audited.stdout, audited


@pytest.mark.parametrize("link", ["symlink", "hard-link"])
def test_a_log_swapped_for_a_link_to_a_shell_file_between_calls_is_never_written_nor_served(
    env, isolated, sandbox, link
):
    policy = write_private(isolated / "policy" / "p.toml", TIGHT)
    before = usdc(sandbox)
    shells = shell_files(isolated)
    session_file = isolated / ".other-tool" / "session.json"  # another tool's token, readable by the person
    session_file.parent.mkdir()
    session_file.write_text('{"token": "other-tool-token-5f1e2d"}\n')
    os.chmod(session_file, 0o600)

    async def body():
        async with session(env, "--policy", str(policy), elicit=DECLINE) as client:
            first = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
            path = audit_path(isolated)
            seen = []
            for target in (isolated / ".bashrc", session_file):
                temporary = path.with_name("swap")
                if link == "symlink":
                    temporary.symlink_to(target)
                else:
                    os.link(target, temporary)
                os.replace(temporary, path)
                seen.append(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
                seen.append(await client.call_tool("execute", {"proposal_id": first["proposal_id"]}))
                seen.append((await client.read_resource("yield://audit")).contents[0].text)
            return seen

    seen = converse(body)
    assert unchanged(shells)
    assert session_file.read_text() == '{"token": "other-tool-token-5f1e2d"}\n'
    why = "symbolic link" if link == "symlink" else "hard links"
    for answer in seen[0::3] + seen[1:2]:  # both prepares, and the first execute (the second finds it claimed)
        assert error(answer)["kind"] == "refused.audit" and why in error(answer)["message"], answer
    assert seen[4].is_error
    for text in seen[2::3]:
        assert "other-tool-token" not in text and "the person's shell" not in text
        assert json.loads(text)["entries"] == [] and why in json.loads(text)["chain"]
    assert usdc(sandbox) == before


def test_a_dangling_symlink_on_a_fresh_log_stops_the_server_before_it_writes_anything(env, isolated):
    shells = shell_files(isolated)
    data = audit_path(isolated).parent
    data.mkdir(parents=True)
    audit_path(isolated).symlink_to(isolated / ".bash_profile")
    started = subprocess.run(
        [YIELD, "mcp"], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
    )
    assert started.returncode == 3 and "symbolic link" in started.stderr, started.stderr
    assert str(audit_path(isolated)) in started.stderr
    assert unchanged(shells) and not (isolated / ".bash_profile").exists()
