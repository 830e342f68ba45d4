""" "stored" is said only once the key was read back from the keyring: a backend that accepts a secret and
keeps nothing (keyring's null backend) made `auth login` and `init` say "stored", and the next command
had no key."""

from __future__ import annotations

from tests.conftest import TEST_API_KEY
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID

FORGETFUL = {"PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}


def test_login_with_a_keyring_that_forgets_fails_and_never_says_stored(run):
    done = run("auth", "login", "--with-token", input=TEST_API_KEY, env=FORGETFUL)
    assert done.code == 3, done.stderr
    assert "stored" not in done.stderr.replace("not stored", "")
    assert "did not keep the API key" in done.error_lines()[-1] and "YIELD_API_KEY" in done.error_lines()[-1]


def test_init_with_a_keyring_that_forgets_fails_before_writing_anything(run, sandbox, isolated):
    env = {"YIELD_API_URL": sandbox.url, **FORGETFUL}
    done = run("init", "--api-key-stdin", "--strategy", DEMO_STRATEGY_ID, input=TEST_API_KEY, env=env)
    assert done.code == 3 and "did not keep the API key" in done.error_lines()[-1]
    assert not (isolated / ".config" / "yield" / "config.toml").exists()


def test_a_keyring_that_keeps_it_says_stored_and_the_key_is_used(run):
    done = run("auth", "login", "--with-token", input=TEST_API_KEY)
    assert done.code == 0 and "stored for profile 'default'" in done.stderr
    assert run("auth", "status", "-o", "json").json()["source"] == "keyring"


def test_the_no_keyring_error_says_it_once(run):
    done = run(
        "auth",
        "login",
        "--with-token",
        input=TEST_API_KEY,
        env={"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
    )
    line = done.error_lines()[-1]
    assert done.code == 3 and line.count("no OS keyring") == 1 and "YIELD_API_KEY" in line, line
