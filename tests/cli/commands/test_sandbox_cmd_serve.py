"""`yield sandbox serve` between restarts: the same API key (kept with the sandbox's state, or given)
and the same RPC port when asked for, so a profile written against it keeps working; and --start-slot."""

from __future__ import annotations

import json
import os
import socket
import subprocess

from tests.conftest import YIELD
from tests.sandbox.rpc.node import result
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID


def free_pair() -> int:
    """A port whose successor is free too (the RPC's and PubSub's)."""
    for _ in range(50):
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            with socket.socket() as second:
                try:
                    second.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
            return int(port)
    raise AssertionError("no two free ports in a row")


def serving(*args: str, lines: int = 0) -> tuple[subprocess.Popen[str], dict]:
    proc = subprocess.Popen(
        [YIELD, "sandbox", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "YIELD_OUTPUT": "table"} if lines else dict(os.environ),
    )
    first = proc.stdout.readline() if proc.stdout else ""
    if not first:
        proc.wait(timeout=10)
        raise AssertionError(proc.stderr.read() if proc.stderr else "no output")
    if lines:
        return proc, {"lines": [first] + [proc.stdout.readline() for _ in range(lines - 1)]}  # type: ignore[union-attr]
    return proc, json.loads(first)


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(timeout=10)


def test_a_restart_keeps_the_api_key_and_the_rpc_port(run, isolated):
    port = free_pair()
    proc, first = serving("--rpc-port", str(port), "-o", "json")
    try:
        assert first["api_key_source"] == "kept" and first["rpc_url"] == f"http://127.0.0.1:{port}"
        assert first["ws_url"] == f"ws://127.0.0.1:{port + 1}"
        slot = result(first["rpc_url"], "getSlot", [{"commitment": "processed"}])
    finally:
        stop(proc)
    proc, second = serving("--rpc-port", str(port), "-o", "json")
    try:
        assert second["api_key"] == first["api_key"] and second["rpc_url"] == first["rpc_url"]
        # The same chain, still moving: the saved profile's RPC answers where it did.
        assert result(second["rpc_url"], "getSlot", [{"commitment": "processed"}]) >= slot
        ok = run(
            "--api-url", second["url"], "strategy", "info", DEMO_STRATEGY_ID, env={"YIELD_API_KEY": first["api_key"]}
        )
        assert ok.code == 0, ok.stderr
    finally:
        stop(proc)
    proc, table = serving("--color", "never", lines=2)
    try:
        assert table["lines"][1].startswith(f"API key: {first['api_key']} (kept in ")
        assert "the same after a restart" in table["lines"][1]
    finally:
        stop(proc)


def test_a_given_api_key_is_said_to_be_given(run, isolated):
    proc, given = serving("--api-key", "my-own-key", "-o", "json")
    try:
        assert given["api_key"] == "my-own-key" and given["api_key_source"] == "given"
    finally:
        stop(proc)


def test_an_rpc_port_in_use_is_one_clear_line(run):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        failed = run("sandbox", "serve", "--rpc-port", str(taken.getsockname()[1]))
    assert failed.code == 2 and "cannot serve the Solana RPC" in failed.stderr and "--rpc-port" in failed.stderr
    assert len(failed.error_lines()) == 1


def test_start_slot_reaches_a_new_chain(run, isolated):
    proc, served = serving("--start-slot", "250000000", "-o", "json")
    try:
        assert result(served["rpc_url"], "getFirstAvailableBlock") == 250_000_000
    finally:
        stop(proc)


def test_doctor_and_init_say_whether_the_served_sandboxs_key_survives_a_restart(run, isolated):
    proc, kept = serving("-o", "json")
    try:
        env = {"YIELD_API_KEY": kept["api_key"]}
        doctor = run("--api-url", kept["url"], "doctor", env=env)
        (line,) = [x for x in doctor.stdout.splitlines() if "API key" in x]
        assert "the served sandbox's key, kept in " in line and "api-key: the same after a restart" in line
        assert kept["api_key"] not in doctor.stdout + doctor.stderr  # masked, as every key
        init = run("--api-url", kept["url"], "init", "--strategy", DEMO_STRATEGY_ID, "-u", kept["rpc_url"], env=env)
        assert "the served sandbox's key, kept in " in init.stdout + init.stderr
    finally:
        stop(proc)
    proc, given = serving("--api-key", "my-own-key-0123456789", "-o", "json")
    try:
        doctor = run("--api-url", given["url"], "doctor", env={"YIELD_API_KEY": "my-own-key-0123456789"})
        assert "given by its --api-key: give the same one on every restart" in doctor.stdout
        # Another service than the served sandbox: nothing said about restarts.
        elsewhere = run("--api-url", "http://127.0.0.1:9", "doctor", env={"YIELD_API_KEY": "my-own-key-0123456789"})
        assert "served sandbox" not in elsewhere.stdout
    finally:
        stop(proc)


def test_init_against_the_served_sandbox_writes_its_rpc_unasked(run, isolated):
    # `yield init` pointed at `yield sandbox serve` wrote mainnet-beta as the RPC unless told otherwise, and
    # the next write then asked a chain that does not hold the sandbox's accounts.
    proc, served = serving("-o", "json")
    try:
        env = {"YIELD_API_KEY": served["api_key"]}
        init = run("--api-url", served["url"], "init", "--strategy", DEMO_STRATEGY_ID, env=env)
        assert init.code == 0, init.stderr
        shown = run("config", "get", "rpc_url", env=env)
        assert shown.stdout.strip().endswith(served["rpc_url"]), shown.stdout
    finally:
        stop(proc)
