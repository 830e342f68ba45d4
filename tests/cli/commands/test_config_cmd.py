"""Configuration precedence, config commands, and the API key in the keyring."""

import json
import os
import stat

from tests.conftest import TEST_API_KEY
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET


def settings(run, *args, env=None):
    result = run(*args, "config", "show", "-o", "json", env=env)
    assert result.code == 0, result.stderr
    return {row["name"]: row for row in result.json()}


def test_precedence_flag_over_env_over_profile_over_default(run, isolated):
    assert settings(run)["api_url"] == {
        "name": "api_url",
        "value": "https://api.breeze.baby",
        "source": "default",
        "location": "",
    }
    assert run("config", "set", "api_url", "https://top.example").code == 0
    assert run("--profile", "p1", "config", "set", "api_url", "https://profile.example").code == 0
    assert settings(run)["api_url"]["value"] == "https://top.example"
    row = settings(run, "--profile", "p1")["api_url"]
    assert (
        row["value"] == "https://profile.example" and row["source"] == "config" and "[profiles.p1]" in row["location"]
    )
    row = settings(run, "--profile", "p1", env={"YIELD_API_URL": "https://env.example"})["api_url"]
    assert row == {"name": "api_url", "value": "https://env.example", "source": "env", "location": "YIELD_API_URL"}
    row = settings(
        run, "--profile", "p1", "--api-url", "https://flag.example", env={"YIELD_API_URL": "https://env.example"}
    )["api_url"]
    assert row["value"] == "https://flag.example" and row["source"] == "flag"
    # YIELD_PROFILE picks the profile too
    assert settings(run, env={"YIELD_PROFILE": "p1"})["api_url"]["value"] == "https://profile.example"


def test_profile_settings_drive_real_requests(run, sandbox):
    assert run("--profile", "sb", "config", "set", "api_url", sandbox.url).code == 0
    assert run("--profile", "sb", "config", "set", "strategy", DEMO_STRATEGY_ID).code == 0
    result = run("--profile", "sb", "positions", DEMO_WALLET, env={"YIELD_API_KEY": TEST_API_KEY})
    assert result.code == 0, result.stderr
    assert result.json()["data"][0]["strategy_id"] == DEMO_STRATEGY_ID


def test_output_setting_from_env_and_config(api):
    # NDJSON holds the whole list (15 balances, PYUSD among them), not the first page of 10
    assert api("balances", DEMO_WALLET, env={"YIELD_OUTPUT": "ndjson"}).stdout.count("\n") == 15
    assert api("config", "set", "output", "csv").code == 0
    assert api("balances", DEMO_WALLET).stdout.startswith("decimals,token_address")
    assert api("balances", DEMO_WALLET, "--json").json()["meta"]["page"] == 1  # the flag wins


def test_config_get_set_unset_path(run, isolated):
    path = run("config", "path").stdout.strip()
    assert path == str(isolated / ".config" / "yield" / "config.toml")
    assert run("config", "get", "strategy").code == 3
    assert run("config", "set", "strategy", "abc").code == 0
    assert run("config", "get", "strategy").stdout.strip() == "abc"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert run("config", "unset", "strategy").code == 0
    assert run("config", "get", "strategy").code == 3


def test_config_refuses_unknown_keys_bad_values_and_secrets(run):
    assert run("config", "set", "colour", "x").code == 2
    assert run("config", "set", "output", "yaml").code == 2
    assert run("config", "set", "timeout", "-1").code == 2
    assert run("config", "set", "api_url", "http://remote.example").code == 2
    result = run("config", "set", "api_key", "secret-value")
    assert result.code == 2 and "auth login" in result.stderr


def test_a_broken_config_file_is_a_configuration_error(run, isolated):
    cfg = isolated / ".config" / "yield"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text("api_url = [unclosed\n")
    result = run("balances", DEMO_WALLET)
    assert result.code == 3 and "not valid TOML" in result.stderr
    other = isolated / "other.toml"
    other.write_text('output = "csv"\n')
    assert settings(run, "--config", str(other))["output"]["value"] == "csv"
    assert settings(run, env={"YIELD_CONFIG": str(other)})["output"]["source"] == "config"


def test_auth_login_status_logout_with_the_keyring(run, sandbox):
    assert run("auth", "status").code == 3
    login = run("auth", "login", "--with-token", input=TEST_API_KEY + "\n")
    assert login.code == 0, login.stderr
    assert TEST_API_KEY not in login.stdout + login.stderr
    status = run("auth", "status", "-o", "json")
    assert status.code == 0 and status.json()["source"] == "keyring"
    assert status.json()["key"] == "****" + TEST_API_KEY[-4:]
    # the stored key is used for requests
    assert run("--api-url", sandbox.url, "balances", DEMO_WALLET).code == 0
    # YIELD_API_KEY beats the keyring
    env_status = run("auth", "status", "-o", "json", env={"YIELD_API_KEY": "other-key-0123456789"}).json()
    assert env_status["source"] == "env"
    assert (
        run("--api-url", sandbox.url, "balances", DEMO_WALLET, env={"YIELD_API_KEY": "other-key-0123456789"}).code == 4
    )
    # per profile
    assert run("--profile", "other", "config", "set", "output", "json").code == 0
    assert run("--profile", "other", "auth", "status").code == 3
    assert run("auth", "logout").code == 0
    assert run("auth", "status").code == 3


def test_auth_login_without_a_terminal_or_token_is_refused(run):
    result = run("auth", "login")
    assert result.code == 2 and "--with-token" in result.stderr


def test_no_keyring_backend_is_exit_3_pointing_at_the_env_variable(run, sandbox):
    env = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    result = run("auth", "login", "--with-token", input=TEST_API_KEY, env=env)
    assert result.code == 3 and "YIELD_API_KEY" in result.stderr
    assert TEST_API_KEY not in result.stderr
    # reads still work with the env variable, and without it the service says what is missing
    assert run("--api-url", sandbox.url, "balances", DEMO_WALLET, env={**env, "YIELD_API_KEY": TEST_API_KEY}).code == 0
    missing = run("--api-url", sandbox.url, "balances", DEMO_WALLET, env=env)
    assert missing.code == 4 and "Missing credentials" in missing.stderr


def test_a_plaintext_keyring_is_refused_and_doctor_says_so(run, isolated):
    env = {"PYTHON_KEYRING_BACKEND": "tests.keyring_backend.Base64FileKeyring"}
    login = run("auth", "login", "--with-token", input=TEST_API_KEY, env=env)
    assert login.code == 3 and "YIELD_API_KEY" in login.stderr and "OS keyring" in login.stderr, login.stderr
    assert "plain" in login.stderr and TEST_API_KEY not in login.stderr
    assert not (isolated / "keyring_pass.cfg").exists()  # nothing written, not even encoded
    # a key left there earlier is not used, and doctor says why
    (isolated / "keyring_pass.cfg").write_text(json.dumps({"yield/api-key:default": "dGVzdC1rZXk="}))
    doctor = run("--api-url", "http://127.0.0.1:9", "doctor", "-o", "json", env=env)
    row = next(c for c in doctor.json()["checks"] if c["name"] == "API key")
    assert doctor.code == 3 and row["status"] == "fail" and "plain" in row["detail"], doctor.stdout
    with_env = run(
        "--api-url", "http://127.0.0.1:9", "doctor", "-o", "json", env={**env, "YIELD_API_KEY": TEST_API_KEY}
    )
    row = next(c for c in with_env.json()["checks"] if c["name"] == "API key")
    assert row["status"] == "warn" and "plain" in row["detail"]  # the variable works; the backend is still named
    assert run("auth", "logout", env=env).code == 0  # the old copy can be removed
    assert "yield/api-key:default" not in (isolated / "keyring_pass.cfg").read_text()


def test_an_unknown_profile_is_a_configuration_error_listing_the_profiles(run, sandbox):
    assert run("--profile", "staging", "config", "set", "api_url", sandbox.url).code == 0
    assert run("--profile", "prod", "config", "set", "strategy", DEMO_STRATEGY_ID).code == 0
    for args, env in (
        (["config", "get", "api_url"], {"YIELD_PROFILE": "stagign"}),
        (["--profile", "nope", "positions", DEMO_WALLET], {"YIELD_API_KEY": TEST_API_KEY}),
        (["positions", DEMO_WALLET, "--profile", "nope"], {"YIELD_API_KEY": TEST_API_KEY}),
    ):
        result = run(*args, env=env)
        assert result.code == 3, (args, result.stderr)
        assert "unknown profile" in result.stderr and "prod, staging" in result.stderr and not result.stdout
    assert run("--profile", "staging", "config", "get", "api_url").stdout.strip() == sandbox.url
    assert run("--profile", "default", "config", "get", "api_url").code == 0


def test_the_key_is_never_written_to_the_config_file(run, isolated):
    run("auth", "login", "--with-token", input=TEST_API_KEY)
    run("config", "set", "output", "json")
    text = (isolated / ".config" / "yield" / "config.toml").read_text()
    assert TEST_API_KEY not in text
    assert TEST_API_KEY not in json.dumps(settings(run))


def test_sandbox_config_show_lists_the_settings_the_commands_use(run):
    rows = {row["name"]: row for row in run("--sandbox", "config", "show", "-o", "json").json()}
    for name in ("api_url", "api_key", "strategy", "rpc_url", "keypair"):
        assert rows[name]["source"] == "sandbox", rows[name]
    assert (
        rows["api_url"]["value"].startswith("http://127.0.0.1:")
        and rows["api_url"]["value"] != rows["rpc_url"]["value"]
    )
    assert rows["rpc_url"]["value"].startswith("http://127.0.0.1:")
    assert rows["keypair"]["value"].endswith("demo-wallet.json")
    # ...and they are what a command uses: the sandbox's strategy, and its demo wallet for balances.
    strategy = run("--sandbox", "strategy", "info", "-o", "json").json()
    assert strategy["strategy_id"] == rows["strategy"]["value"]
    named = run("--sandbox", "config", "show", "-o", "json", env={"YIELD_STRATEGY": "mine"}).json()
    assert [row["source"] for row in named if row["name"] == "strategy"] == ["env"]


def test_a_broken_output_or_color_setting_can_be_read_and_fixed_with_config_itself(run, isolated):
    path = isolated / ".config" / "yield" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('output = "bogus"\ncolor = "purple"\n')
    assert run("health").code == 3  # every other command refuses the file, and says where
    assert run("config", "path").stdout.strip() == str(path)
    assert run("config", "get", "output").stdout.strip() == "bogus"
    assert run("config", "unset", "output").code == 0 and run("config", "set", "color", "never").code == 0
    assert "output" not in path.read_text() and 'color = "never"' in path.read_text()


def test_config_set_of_two_keys_by_processes_at_once_keeps_every_key(run, isolated):
    # Each `yield config set` reads the file, changes one key and writes it back: without the lock
    # around that, the last writer drops the keys the others wrote meanwhile.
    import subprocess

    from tests.conftest import YIELD

    values = {
        "strategy": DEMO_STRATEGY_ID,
        "output": "csv",
        "timeout": "12",
        "color": "never",
        "rpc_url": "devnet",
        "priority_fee": "auto",
        "max_fee": "5000",
        "api_url": "https://one.example",
    }
    for round_ in range(3):
        procs = [
            subprocess.Popen(
                [YIELD, "--profile", f"p{round_}", "config", "set", key, value],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
            )
            for key, value in values.items()
        ]
        for proc in procs:
            assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
            if proc.stderr:
                proc.stderr.close()
        shown = settings(run, "--profile", f"p{round_}")
        assert {key: shown[key]["value"] for key in values} == values


def test_config_file_update_holds_a_lock_around_read_change_write(isolated, tmp_path):
    # The library's side, with a slow change: processes that start together still keep every key.
    import multiprocessing

    path = tmp_path / "config.toml"
    keys = ["strategy", "output", "timeout", "color", "rpc_url", "priority_fee"]
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(len(keys))
    procs = [context.Process(target=_set_slowly, args=(str(path), key, start)) for key in keys]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
        assert proc.exitcode == 0
    from yieldcli.config import ConfigFile

    assert ConfigFile.load(path).data == {key: f"value of {key}" for key in keys}


def _set_slowly(path: str, key: str, start) -> None:
    import time
    from pathlib import Path

    from yieldcli.config import ConfigFile

    def change(latest: ConfigFile) -> bool:
        time.sleep(0.2)  # every other process is ready to read the file meanwhile
        latest.set(key, f"value of {key}", None)
        return True

    config = ConfigFile.load(Path(path))
    start.wait(timeout=60)
    config.update(change)
