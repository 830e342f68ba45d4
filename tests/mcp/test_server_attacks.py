"""The attacks of issue 28 against `yield mcp`, each through the official MCP client over stdio against
the sandbox (or a service that doctors its answers): each fails closed, nothing is signed beyond the
policy, and `yield mcp audit` agrees with the chain."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest

from tests.cli.stand_in import World, rpc_call
from tests.conftest import TEST_API_KEY, YIELD
from tests.mcp.harness import (
    POLICY,
    Echoing,
    Rewriting,
    answering,
    parameters,
    secret_forms,
    server_env,
    session,
    structured,
    write_private,
)
from yieldcli.sandbox.demo import DEMO_WALLET

SOL_POLICY = """\
writes = true
actions = ["deposit", "withdraw", "close-account"]
writes_per_hour = 50

[assets.SOL]
auto_per_call = "0.01"
auto_daily = "0.01"
per_call = "0.02"
daily = "0.02"
"""


@pytest.fixture
def home(isolated):
    return isolated


@pytest.fixture
def env(sandbox, home):
    return server_env(sandbox, home)


def audit_path(home: Path) -> Path:
    return home / ".local" / "share" / "yield" / "mcp-audit.jsonl"


def audit_entries(home: Path) -> list[dict]:
    path = audit_path(home)
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def lamports(sandbox) -> int:
    return int(rpc_call(sandbox.rpc_url, "getBalance", [DEMO_WALLET, {"commitment": "confirmed"}])["value"])


def usdc(sandbox) -> int:
    from tests.cli.stand_in import USER_ATA

    answer = rpc_call(sandbox.rpc_url, "getTokenAccountBalance", [str(USER_ATA), {"commitment": "confirmed"}])
    return int(answer["value"]["amount"])


def audit_ok(run, env) -> bool:
    return run("mcp", "audit", env=env).code == 0


# --- every amount is known -------------------------------------------------------------------------


@pytest.mark.parametrize("unwrap", [True, False])
def test_sol_withdrawn_all_counts_every_lamport_against_the_sol_limits(env, home, sandbox, run, unwrap):
    policy = write_private(home / "policy" / "sol.toml", SOL_POLICY)
    before = lamports(sandbox)

    async def body():
        async with session(env, "--policy", str(policy), elicit=answering("accept")) as client:
            asked = {"asset": "SOL", "all": True, "unwrap_wsol": unwrap}
            answer = structured(await client.call_tool("prepare_withdraw", asked))
            return answer, await client.call_tool("execute", {"proposal_id": answer["proposal_id"]})

    answer, executed = run_body(body)
    assert answer["policy"]["verdict"] == "refused" and "above the per-call limit of 0.02" in answer["policy"]["reason"]
    assert int(answer["amount"]["base_units"]) >= 15 * 10**9, answer  # the 15.27 SOL position, not 0
    assert executed.is_error and structured(executed)["error"]["kind"] == "refused.proposal_refused"
    assert lamports(sandbox) == before
    assert not any(e["event"] == "reserved" for e in audit_entries(home)) and audit_ok(run, env)


def test_sol_withdrawn_unwrapped_is_charged_to_the_daily_sol_budget(env, home, sandbox, run):
    policy = write_private(home / "policy" / "sol.toml", SOL_POLICY)

    async def body():
        async with session(env, "--policy", str(policy), elicit=answering("accept")) as client:
            small = {"asset": "SOL", "amount": "0.015", "unwrap_wsol": True}
            first = structured(await client.call_tool("prepare_withdraw", small))
            done = structured(await client.call_tool("execute", {"proposal_id": first["proposal_id"]}))
            second = structured(await client.call_tool("prepare_withdraw", {**small, "amount": "0.01"}))
            return first, done, second

    first, done, second = run_body(body)
    # What reaches the wallet, after the strategy's 0.1% withdrawal fee, in lamports: unwrapped, it is still SOL.
    assert first["amount"]["base_units"] == "14985000" and first["policy"]["verdict"] == "approval", first
    assert done["status"] == "confirmed", done
    reserved = [e for e in audit_entries(home) if e["event"] == "reserved"]
    assert [int(e["raw"]) for e in reserved] == [14_985_000]
    # 0.015 SOL already used: 0.01 more would pass the 24-hour limit of 0.02.
    assert second["policy"]["verdict"] == "refused" and "24-hour limit of 0.02" in second["policy"]["reason"], second
    assert audit_ok(run, env)


def run_body(body):
    return anyio.run(body)


# --- the audit log cannot be rewritten ------------------------------------------------------------


def rechain(entries: list[dict]) -> list[dict]:
    """What someone who can write the log, but cannot read the seal's key, can do: recompute the chain."""
    prev = "0" * 64
    for seq, entry in enumerate(entries, 1):
        entry.update(seq=seq, prev=prev)
        body = json.dumps({k: v for k, v in entry.items() if k != "hash"}, sort_keys=True, separators=(",", ":"))
        entry["hash"] = prev = hashlib.sha256(body.encode()).hexdigest()
    return entries


def rewrite_log(home: Path, change) -> None:
    entries = change(audit_entries(home))
    audit_path(home).write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries))


def forge_releases(entries: list[dict]) -> list[dict]:
    reserved = [e["proposal"] for e in entries if e["event"] == "reserved"]
    return rechain([*entries, *({"time": entries[-1]["time"], "event": "released", "proposal": p} for p in reserved)])


def cut_before_reservations(entries: list[dict]) -> list[dict]:
    first = next(i for i, e in enumerate(entries) if e["event"] == "reserved")
    return entries[:first]


@pytest.mark.parametrize("attack", [forge_releases, cut_before_reservations], ids=["forged-releases", "cut"])
def test_a_rewritten_log_gives_no_budget_back_to_a_running_or_a_new_server(env, home, sandbox, run, attack):
    """Limit 10 USDC a day; 6 sent; the log rewritten as an agent's file tool could (hashes recomputed):
    the server that sent them signs nothing more (not even the 4 it had proposed), neither it nor a second
    one started after proposes the next 6, and `yield mcp audit` says the log was altered (exit 3)."""
    policy = write_private(home / "policy" / "tight.toml", POLICY.replace('daily = "100"', 'daily = "10"'))
    before = usdc(sandbox)

    async def body():
        params = ("--policy", str(policy))
        async with session(env, *params, elicit=answering("accept")) as first:
            sent = await first.call_tool("execute", {"proposal_id": await propose(first, "6")})
            waiting = await propose(first, "4")
            rewrite_log(home, attack)
            again = await first.call_tool("execute", {"proposal_id": waiting})
            more = await first.call_tool("prepare_deposit", {"asset": "USDC", "amount": "6"})
            async with session(env, *params, elicit=answering("accept")) as second:
                other = await second.call_tool("prepare_deposit", {"asset": "USDC", "amount": "6"})
            return sent, [again, more, other]

    sent, refused = run_body(body)
    assert structured(sent)["status"] == "confirmed"
    for answer in refused:
        assert answer.is_error and structured(answer)["error"]["kind"] == "refused.audit", answer
    assert usdc(sandbox) == before - 6_000_000
    audit = run("mcp", "audit", env=env)
    assert audit.code == 3 and "was altered" in audit.stderr, audit.stderr


async def propose(client, amount: str) -> str:
    answer = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": amount}))
    assert answer["executable"], answer
    return answer["proposal_id"]


def test_yield_mcp_audit_exits_non_zero_on_a_last_line_cut_short(env, home, run):
    policy = write_private(home / "policy" / "p.toml", POLICY)

    async def body():
        async with session(env, "--policy", str(policy)) as client:
            await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"})

    run_body(body)
    assert audit_ok(run, env)
    text = audit_path(home).read_text()
    audit_path(home).write_text(text[:-20])  # the last entry cut mid-line
    audit = run("mcp", "audit", env=env)
    assert audit.code == 3 and "cut short" in audit.stderr, audit.stderr


# --- files are checked where they are -------------------------------------------------------------


def start(env, *args: str) -> subprocess.CompletedProcess:
    """`yield mcp` with standard input at its end: a server that started stops there at once (exit 0)."""
    return subprocess.run(
        [YIELD, "mcp", *args], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
    )


def test_a_policy_reached_through_a_symlink_is_judged_where_it_really_is(env, home):
    shared = home / "shared"  # a folder anyone may write, without the sticky bit
    real = write_private(shared / "policy.toml", POLICY)
    os.chmod(shared, 0o777)
    link = home / "mine" / "policy.toml"
    link.parent.mkdir(mode=0o700)
    link.symlink_to(real)
    refused = start(env, "--policy", str(link))
    assert refused.returncode == 3, refused.stderr
    assert f"folder {shared} of the policy file {link} (really {real}) can be written by others" in refused.stderr
    # A folder higher up counts as much as the file's own.
    deep = write_private(shared / "inner" / "policy.toml", POLICY)
    assert start(env, "--policy", str(deep)).returncode == 3
    # A sticky folder (as /tmp) is no danger to a folder of ours in it.
    os.chmod(shared, 0o1777)
    assert start(env, "--policy", str(link)).returncode == 0


def test_an_audit_log_reached_through_a_symlink_into_an_open_folder_stops_the_server(env, home):
    """The log's own name is never followed (issue 36): a symlink there is refused whatever it points
    at; a data folder that is itself a symlink into an open folder is judged where it really is."""
    shared = home / "shared"
    shared.mkdir(mode=0o700)
    os.chmod(shared, 0o777)
    data = home / ".local" / "share" / "yield"
    data.mkdir(parents=True)
    (data / "mcp-audit.jsonl").symlink_to(shared / "audit.jsonl")
    (shared / "audit.jsonl").write_text("")
    refused = start(env)
    assert refused.returncode == 3 and "is a symbolic link" in refused.stderr, refused.stderr
    (data / "mcp-audit.jsonl").unlink()
    data.rmdir()
    data.symlink_to(shared)
    refused = start(env)
    assert refused.returncode == 3 and "can be written by others" in refused.stderr, refused.stderr


# --- one asset, one rule --------------------------------------------------------------------------


def test_a_policy_naming_one_asset_twice_is_refused_at_start_naming_both_lines(env, home):
    twice = POLICY + '\n[assets."EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"]\nper_call = "1000"\ndaily = "1000"\n'
    policy = write_private(home / "policy" / "twice.toml", twice)
    refused = start(env, "--policy", str(policy))
    assert refused.returncode == 3, refused.stderr
    assert "[assets.USDC] (line 5)" in refused.stderr
    assert '[assets."EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"] (line 11)' in refused.stderr
    assert "name the same asset (USDC)" in refused.stderr


# --- the kill switch ------------------------------------------------------------------------------


def test_the_kill_switch_stops_a_running_server_before_the_next_prepare_or_execute(env, home, sandbox, run):
    policy = write_private(home / "policy" / "p.toml", POLICY)
    before = usdc(sandbox)

    async def body():
        async with session(env, "--policy", str(policy), elicit=answering("accept")) as client:
            pending = await propose(client, "1")
            policy.write_text("kill_switch = true\n" + POLICY)
            executed = await client.call_tool("execute", {"proposal_id": pending})
            proposed = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
            policy.write_text(POLICY.replace('daily = "100"', 'daily = "100000"'))  # no loosening while running
            resumed = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
            os.chmod(policy, 0o666)  # a file that cannot be trusted any more stops writes too
            untrusted = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
            shown = json.loads((await client.read_resource("yield://policy")).contents[0].text)
            return executed, proposed, resumed, untrusted, shown

    executed, proposed, resumed, untrusted, shown = run_body(body)
    assert executed.is_error and structured(executed)["error"]["kind"] == "refused.kill_switch", executed
    assert proposed["policy"]["verdict"] == "refused" and "kill switch is on" in proposed["policy"]["reason"]
    assert resumed["policy"]["verdict"] == "auto" and shown["assets"][next(iter(shown["assets"]))]["daily"] == "100"
    assert untrusted["policy"]["verdict"] == "refused" and "can be written by others" in untrusted["policy"]["reason"]
    assert usdc(sandbox) == before and audit_ok(run, env)


# --- an agent is not misled about what moved ------------------------------------------------------


def test_a_second_execute_sending_the_same_bytes_answers_already_sent(sandbox, run, tmp_path, home):
    """A service that builds the same transaction twice (the same blockhash): the second execute sends
    bytes that landed already, and says so with the first proposal's id and signature."""
    world = World(sandbox, run, tmp_path)
    built: list = []

    def first_one(tx):
        built.append(tx)
        return built[0]

    world.stand_in.doctor = first_one
    env = server_env(sandbox, home, api_url=world.stand_in.url)
    policy = write_private(home / "policy" / "p.toml", POLICY)
    before = usdc(sandbox)
    try:

        async def body():
            async with session(env, "--policy", str(policy)) as client:
                a, b = await propose(client, "1"), await propose(client, "1")
                return (
                    a,
                    structured(await client.call_tool("execute", {"proposal_id": a})),
                    structured(await client.call_tool("execute", {"proposal_id": b})),
                )

        a, first, second = run_body(body)
    finally:
        world.stand_in.stop()
    assert first["status"] == "confirmed" and first["new_transaction"], first
    assert second["status"] == "already_sent" and not second["new_transaction"], second
    assert second["first_proposal_id"] == a and second["signature"] == first["signature"]
    assert usdc(sandbox) == before - 1_000_000
    assert audit_ok(run, env)


# --- nothing secret, nothing invisible ------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 500])
def test_an_api_key_echoed_by_the_service_reaches_neither_the_agent_nor_the_terminal(sandbox, home, run, status):
    echo = Echoing(status)
    env = server_env(sandbox, home, api_url=echo.url)
    policy = write_private(home / "policy" / "p.toml", POLICY)
    try:

        async def body():
            async with session(env, "--policy", str(policy)) as client:
                return [
                    await client.call_tool("strategy", {}),
                    await client.call_tool("positions", {}),
                    await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}),
                    await client.read_resource("yield://audit"),
                ]

        answers = run_body(body)
        commands = (("positions",), ("strategy", "info"), ("-v", "-o", "json", "positions"))
        cli = [run(*args, env=env) for args in commands]
    finally:
        echo.stop()
    assert all(a.is_error and "invalid x-api-key" in a.content[0].text for a in answers[:3]), answers
    seen = "\n".join([*map(str, answers), *(c.stdout + c.stderr for c in cli)])
    assert "invalid x-api-key" in seen
    logs = "\n".join(p.read_text(errors="replace") for p in home.rglob("*") if p.is_file() and "keys" not in p.parts)
    for form in secret_forms(TEST_API_KEY):
        assert form not in seen and form not in logs, form


INVISIBLE = "\ufe0f\U000e0100\u3164\u115f\u1160\uffa0\u034f\u180b\u17b4\u00ad\u2060\u200b\u202e\u00a0\u2028\ue000\x7f"


def test_names_from_the_service_reach_the_model_without_an_invisible_character_or_the_key(sandbox, home):
    def rename(body):
        # The API key too, split by a zero-width space that would hide it from a plain search.
        body["strategy_name"] = "Safe" + INVISIBLE + "Yield " + TEST_API_KEY[:6] + "\u200b" + TEST_API_KEY[6:]
        return body

    proxy = Rewriting(sandbox.url, {"/strategy-info/": rename})
    try:

        async def body():
            async with session(server_env(sandbox, home, api_url=proxy.url)) as client:
                return await client.call_tool("strategy", {})

        result = run_body(body)
    finally:
        proxy.stop()
    assert structured(result)["strategy_name"] == "Safe Yield …"  # the line breaks and spaces became one space
    assert not any(ch in result.content[0].text for ch in INVISIBLE)


# --- a client that goes away ----------------------------------------------------------------------


def test_a_client_that_closes_the_pipe_ends_the_server_quietly(env):
    """Four times over: the client reads the first answer, asks again and closes both pipes at once."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    more = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    server = parameters(env)
    for _ in range(4):
        proc = subprocess.Popen(
            [server.command, *server.args],
            env=server.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        proc.stdin.write((json.dumps(init) + "\n").encode())
        proc.stdin.flush()
        assert b'"id":1' in proc.stdout.readline()
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in more).encode())
        proc.stdin.flush()
        proc.stdout.close()
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        assert proc.stderr.read() == b""
        proc.stderr.close()
