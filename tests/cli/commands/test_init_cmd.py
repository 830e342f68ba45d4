"""`yield init`: from an empty home to a checked setup against the sandbox served over loopback,
as a script (flags) and as a person at a terminal of 80 columns (tmux) answering the prompts."""

from __future__ import annotations

import tomllib

import pytest

from tests.cli.tmux import TMUX, Screen
from tests.conftest import TEST_API_KEY
from yieldcli.cli.commands.init_cmd import WHERE_FROM
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID


def config_of(isolated) -> dict:
    return tomllib.loads((isolated / ".config" / "yield" / "config.toml").read_text())


def test_a_script_sets_up_with_flags_and_doctor_passes(run, sandbox, isolated):
    env = {"YIELD_API_URL": sandbox.url}
    done = run(
        "init", "--api-key-stdin", "--strategy", DEMO_STRATEGY_ID, "-u", sandbox.rpc_url, input=TEST_API_KEY, env=env
    )
    assert done.code == 0, done.stderr
    assert done.json()["ok"] is True  # doctor's report, as `yield doctor` gives it to a script
    assert config_of(isolated) == {"strategy": DEMO_STRATEGY_ID, "rpc_url": sandbox.rpc_url}
    assert "Sandbox Yield Strategy" in done.stderr and TEST_API_KEY not in done.stdout + done.stderr
    status = run("auth", "status", "-o", "json", env=env)
    assert status.json()["source"] == "keyring"
    # Everything the setup needs is now where later commands find it.
    assert run("strategy", "info", "-o", "json", env=env).json()["strategy_id"] == DEMO_STRATEGY_ID
    # Run again, nothing to ask: the stored key and the settings are kept.
    again = run("init", env=env)
    assert again.code == 0 and "already in the keyring" in again.stderr


def test_yield_api_key_is_used_as_it_is_and_a_script_must_name_the_strategy(run, sandbox, isolated):
    env = {"YIELD_API_URL": sandbox.url, "YIELD_API_KEY": TEST_API_KEY}
    missing = run("init", "-u", sandbox.rpc_url, env=env)
    assert missing.code == 2 and "--strategy" in missing.error_lines()[-1]
    done = run("init", "--strategy", DEMO_STRATEGY_ID, "-u", sandbox.rpc_url, env=env)
    assert done.code == 0, done.stderr
    assert "from YIELD_API_KEY (nothing stored)" in done.stderr
    wrong = run("init", "--strategy", "no-such-strategy", env=env)
    assert wrong.code == 2 and "'no-such-strategy' (from --strategy)" in wrong.error_lines()[-1]


def test_a_key_the_service_refuses_fails_before_anything_is_written(run, sandbox, isolated):
    env = {"YIELD_API_URL": sandbox.url}
    done = run("init", "--api-key-stdin", "--strategy", DEMO_STRATEGY_ID, input="not-the-key", env=env)
    assert done.code == 4, done.stderr
    assert not (isolated / ".config" / "yield" / "config.toml").exists()


def test_no_keyring_is_said_before_the_key_is_asked_for(run, sandbox):
    env = {"YIELD_API_URL": sandbox.url, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    done = run("init", "--api-key-stdin", "--strategy", DEMO_STRATEGY_ID, input=TEST_API_KEY, env=env)
    assert done.code == 3 and "YIELD_API_KEY" in done.error_lines()[-1]


@pytest.mark.skipif(not TMUX, reason="tmux is not installed (the README's test command installs it as root)")
def test_at_a_terminal_of_80_columns_a_person_answers_the_prompts(tmp_path, sandbox, isolated):
    screen = Screen(tmp_path, width=80, height=50, env={"YIELD_API_URL": sandbox.url})
    try:
        screen.type('clear; yield init; echo __do""ne__$?', "Enter")
        screen.wait_for("customer portal", "API key:")
        screen.type(TEST_API_KEY, "Enter")
        screen.wait_for("Strategy id (from the customer portal):")
        screen.type(DEMO_STRATEGY_ID, "Enter")
        screen.wait_for("Solana RPC URL or moniker")
        screen.type(sandbox.rpc_url, "Enter")
        text = screen.wait_for("__done__", timeout=90)
    finally:
        screen.close()
    assert "__done__0" in text, text
    assert TEST_API_KEY not in text  # the prompt hides it
    assert "ok    key accepted" in text and "Ready:" in text
    # Where the key and the strategy id come from, each line whole at 80 columns (none wrapped).
    lines = [line.rstrip() for line in text.splitlines()]
    assert all(line in lines for line in WHERE_FROM.splitlines()), text
    assert config_of(isolated) == {"strategy": DEMO_STRATEGY_ID, "rpc_url": sandbox.rpc_url}


@pytest.mark.skipif(not TMUX, reason="tmux is not installed (the README's test command installs it as root)")
@pytest.mark.parametrize("command", ["yield auth login", "yield init"])
def test_with_no_keyring_the_key_is_never_asked_for(tmp_path, sandbox, command):
    screen = Screen(tmp_path, width=80, env={"YIELD_API_URL": sandbox.url})
    try:
        text = screen.run(f"PYTHON_KEYRING_BACKEND=keyring.backends.fail.Keyring {command}")
    finally:
        screen.close()
    assert "__done__3" in text, text
    assert "API key:" not in text and "no OS keyring backend is available" in text
