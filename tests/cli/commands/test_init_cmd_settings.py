"""`yield init` keeps every setting it was given (the global --api-url, -u and -k before `init` too), so
the next command, with no flag, finds the same setup; its last word is doctor's verdict."""

from __future__ import annotations

import tomllib

from tests.conftest import TEST_API_KEY, write_keypair
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair


def config_of(isolated) -> dict:
    return tomllib.loads((isolated / ".config" / "yield" / "config.toml").read_text())


def test_the_api_url_given_to_init_is_saved_and_the_next_doctor_passes(run, sandbox, isolated):
    done = run(
        "--api-url",
        sandbox.url,
        "init",
        "--api-key-stdin",
        "--strategy",
        DEMO_STRATEGY_ID,
        "-u",
        sandbox.rpc_url,
        input=TEST_API_KEY,
    )
    assert done.code == 0, done.stderr
    assert config_of(isolated) == {"api_url": sandbox.url, "strategy": DEMO_STRATEGY_ID, "rpc_url": sandbox.rpc_url}
    # The verdict is the last thing said, after doctor's checks, never before them.
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("Ready: `yield doctor` found nothing failing"), done.stderr
    assert lines.index("Checking the setup (yield doctor):") < len(lines) - 1
    # No flag and no environment: the next command reads the same service from the config file.
    later = run("doctor", "-o", "json")
    assert later.code == 0, later.stderr
    assert later.json()["ok"] is True


def test_global_url_and_keypair_before_init_are_saved_too(run, sandbox, isolated, tmp_path):
    keypair = write_keypair(tmp_path / "me.json", demo_keypair())
    env = {"YIELD_API_URL": sandbox.url, "YIELD_API_KEY": TEST_API_KEY}
    done = run("-u", sandbox.rpc_url, "-k", keypair, "init", "--strategy", DEMO_STRATEGY_ID, env=env)
    assert done.code == 0, done.stderr
    assert config_of(isolated) == {"strategy": DEMO_STRATEGY_ID, "rpc_url": sandbox.rpc_url, "keypair": keypair}


def test_a_failing_doctor_is_the_last_word_and_no_ready_is_said(run, sandbox, isolated):
    env = {"YIELD_API_KEY": TEST_API_KEY}
    done = run("--api-url", sandbox.url, "init", "--strategy", DEMO_STRATEGY_ID, "-u", "http://127.0.0.1:9", env=env)
    assert done.code == 6, done.stderr
    assert "Ready" not in done.stderr
    assert done.error_lines()[-1].startswith("error:"), done.stderr
    # What was given is kept all the same: fixing the RPC is the one step left.
    assert config_of(isolated)["api_url"] == sandbox.url
