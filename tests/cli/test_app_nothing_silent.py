"""Nothing is accepted without a word: contradicting flags, page 0, a config file that is not there,
keys no setting reads, negative numbers taken for options, API keys that cannot be sent."""

from __future__ import annotations

import json

import pytest

from yieldcli.sandbox.demo import DEMO_WALLET


@pytest.mark.parametrize(
    "args",
    [
        ["positions", "--json", "-o", "csv"],
        ["positions", "-o", "csv", "--json"],
        ["--json", "positions", "-o", "csv"],
        ["-o", "ndjson", "positions", "--json"],
        ["--json", "-o", "csv", "health"],
    ],
)
def test_json_beside_another_format_is_refused_naming_both(run, args):
    result = run("--sandbox", *args)
    assert result.code == 2 and result.stdout == ""
    line = result.error_lines()[-1]
    assert "--json" in line and ("-o csv" in line or "-o ndjson" in line)


def test_all_with_page_and_page_zero_are_refused(run):
    both = run("--sandbox", "balances", "--all", "--page", "2")
    assert both.code == 2 and "--all and --page" in both.error_lines()[-1] and both.stdout == ""
    zero = run("--sandbox", "balances", "--page", "0")
    assert zero.code == 2 and "--page" in zero.error_lines()[-1]


def test_a_named_config_file_that_does_not_exist_is_a_configuration_error(run, tmp_path):
    nope = tmp_path / "nope.toml"
    flag = run("--config", str(nope), "--sandbox", "health")
    assert flag.code == 3 and f"config file {nope} (from --config) does not exist" in flag.error_lines()[-1]
    env = run("--sandbox", "health", env={"YIELD_CONFIG": str(nope)})
    assert env.code == 3 and "(from YIELD_CONFIG)" in env.error_lines()[-1]
    # Writing to it is how it is made.
    assert run("--config", str(nope), "config", "set", "timeout", "5").code == 0
    assert run("--config", str(nope), "--sandbox", "health").code == 0


def test_unknown_keys_are_warned_about_and_fail_validate_and_doctor(run, tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('rpc-url = "devnet"\nbogus = 1\n[profiles.ci]\nstrategi = "x"\n')
    read = run("--config", str(path), "--sandbox", "health", "-o", "json")
    assert read.code == 0
    assert f"warning: {path}: unknown setting 'rpc-url'; did you mean 'rpc_url'?" in read.stderr
    assert f"warning: {path} [profiles.ci]: unknown setting 'strategi'; did you mean 'strategy'?" in read.stderr
    assert "unknown setting 'bogus'; settings: api_url" in read.stderr
    validate = run("--config", str(path), "config", "validate")
    assert validate.code == 3 and "3 problems" in validate.error_lines()[-1]
    doctor = run("--config", str(path), "--sandbox", "doctor", "-o", "json")
    assert doctor.code == 3
    failed = [c for c in json.loads(doctor.stdout)["checks"] if c["status"] == "fail"]
    assert [c["name"] for c in failed] == ["config values"] and "did you mean 'rpc_url'" in failed[0]["detail"]
    path.write_text('rpc_url = "devnet"\ntimeout = "-3"\n')
    bad_value = run("--config", str(path), "config", "validate")
    assert bad_value.code == 3 and "timeout" in bad_value.stderr
    path.write_text('rpc_url = "devnet"\n[profiles.ci]\ntimeout = 10\n')
    good = run("--config", str(path), "config", "validate")
    assert good.code == 0 and "valid (profiles: ci)" in good.stdout and good.stderr == ""


def test_negative_numbers_are_values(run):
    result = run("config", "set", "timeout", "-5")
    assert result.code == 2
    assert "No such option" not in result.stderr and "invalid value for timeout: '-5'" in result.error_lines()[-1]
    wallet = run("--sandbox", "balances", "-5")
    assert wallet.code == 2 and "'-5' is not a Solana address" in wallet.error_lines()[-1]
    assert run("config", "set", "timeout", "-x").error_lines()[-1].startswith("error: No such option: -x")


@pytest.mark.parametrize("key", ["abc def", "abc\tdef", "abc\x01def", " abc"])
def test_an_api_key_that_cannot_be_sent_is_refused_where_it_is_read(api, run, key):
    env = {"YIELD_API_KEY": key}
    status = run("auth", "status", env=env)
    assert status.code == 3 and "the API key from YIELD_API_KEY cannot be sent" in status.error_lines()[-1]
    assert api("balances", DEMO_WALLET, env=env).code == 3
    login = run("auth", "login", "--with-token", input=key)
    assert login.code == 2 and "the API key from standard input is refused" in login.error_lines()[-1]


def test_a_malformed_key_in_the_keyring_is_refused_naming_the_keyring(run, isolated):
    (isolated / "stand-in-os-keyring.json").write_text(json.dumps({"yield/api-key:default": "abc def"}))
    status = run("auth", "status")
    assert status.code == 3 and "from keyring yield/api-key:default cannot be sent" in status.error_lines()[-1]
    doctor = run("doctor", "-o", "json")
    api_key = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "API key")
    assert api_key["status"] == "fail" and "cannot be sent" in api_key["detail"]
    shown = {r["name"]: r for r in run("config", "show", "-o", "json").json()}
    assert shown["api_key"]["source"] == "unusable"
