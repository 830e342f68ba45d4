"""`yield --sandbox` and `yield sandbox serve|reset`, as users run them."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import YIELD
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID


def test_embedded_sandbox_needs_no_key_and_defaults_to_the_demo_wallet_and_strategy(run):
    result = run("--sandbox", "positions", "-o", "json")
    assert result.code == 0, result.stderr
    first = result.json()["data"][0]
    assert first["strategy_id"] == DEMO_STRATEGY_ID
    assert run("--sandbox", "strategy", "info", "-o", "json").json()["strategy_id"] == DEMO_STRATEGY_ID
    for command in ("balances", "earnings"):
        assert run("--sandbox", command, "-o", "table").code == 0


def test_embedded_sandbox_honours_a_named_strategy(run):
    result = run("--sandbox", "strategy", "info", "nope")
    assert result.code == 2 and "Strategy not found" in result.stderr


def test_embedded_sandbox_state_lives_in_the_data_dir_and_reset_starts_afresh(run, isolated):
    assert run("--sandbox", "health").code == 0
    folder = isolated / ".local" / "share" / "yield" / "sandbox"
    assert (folder / "state.json").exists()
    assert run("sandbox", "reset").code == 0
    assert not folder.exists()
    assert run("--sandbox", "health").code == 0


def test_sandbox_serve_prints_url_and_key_and_serves_real_requests(run, isolated):
    proc = subprocess.Popen(
        [YIELD, "sandbox", "serve", "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        info = json.loads(proc.stdout.readline())
        assert info["url"].startswith("http://127.0.0.1:")
        missing = run("--api-url", info["url"], "strategy", "info", DEMO_STRATEGY_ID)
        assert missing.code == 4 and "Missing credentials" in missing.stderr
        ok = run("--api-url", info["url"], "strategy", "info", DEMO_STRATEGY_ID, env={"YIELD_API_KEY": info["api_key"]})
        assert ok.code == 0 and ok.json()["strategy_id"] == DEMO_STRATEGY_ID
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_sandbox_serve_refuses_a_remote_host_without_consent(run):
    result = run("sandbox", "serve", "--host", "0.0.0.0")
    assert result.code == 2 and "loopback" in result.stderr and "--allow-remote" in result.stderr
    assert len(result.error_lines()) == 1


def test_sandbox_serve_on_a_port_in_use_is_one_clear_line(run):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = run("sandbox", "serve", "--port", str(taken.getsockname()[1]))
    assert result.code == 2 and "in use" in result.stderr and "--port" in result.stderr
    assert len(result.error_lines()) == 1


def test_serve_try_line_works_on_a_fresh_config_and_info_names_the_server(run):
    proc = subprocess.Popen(
        [YIELD, "sandbox", "serve", "--color", "never"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "YIELD_OUTPUT": "table"},
    )
    try:
        lines = [proc.stdout.readline() for _ in range(4)]
        assert lines[0].startswith("sandbox service at"), lines
        try_line = next(line for line in lines if line.startswith("try: "))[len("try: ") :].split()
        key = try_line[0].split("=", 1)[1]
        result = run(*try_line[2:], "-o", "json", env={"YIELD_API_KEY": key})
        assert result.code == 0 and result.json()["strategy_id"] == DEMO_STRATEGY_ID
        info = run("sandbox", "info", "-o", "json").json()
        assert info["server"]["url"] in lines[0] and info["server"]["rpc_url"].startswith("http://127.0.0.1:")
        rpc_port = int(info["server"]["rpc_url"].rsplit(":", 1)[1])
        assert info["server"]["ws_url"] == f"ws://127.0.0.1:{rpc_port + 1}" and info["server"]["ws_url"] in lines[2]
        refused = run("sandbox", "reset")
        assert refused.code == 2 and "stop it first" in refused.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert run("sandbox", "info", "-o", "json").json()["server"] is None


def test_sandbox_info_says_where_everything_is(run):
    from yieldcli.sandbox.demo import DEMO_WALLET

    info = run("sandbox", "info", "-o", "json").json()
    assert info["demo_wallet"] == DEMO_WALLET and info["strategy_id"] == DEMO_STRATEGY_ID
    keypair = json.loads(Path(info["demo_keypair"]).read_text())
    assert len(keypair) == 64 and Path(info["state_folder"]).name == "sandbox"
    table = run("sandbox", "info", "-o", "table").stdout
    assert DEMO_WALLET in table and info["demo_keypair"] in table


def test_airdrop_funds_another_wallet_for_a_separate_payer(run, tmp_path):
    from solders.keypair import Keypair

    payer = Keypair()
    path = tmp_path / "payer.json"
    path.write_text(json.dumps(list(bytes(payer))))
    path.chmod(0o600)
    address = str(payer.pubkey())
    assert run("sandbox", "airdrop", address, "--sol", "2").code == 0
    got = run("sandbox", "airdrop", address, "--token", "USDC", "--amount", "12.5", "-o", "json")
    assert got.code == 0, got.stderr
    balances = {
        b["token_symbol"]: b["total_balance"]
        for b in run("--sandbox", "balances", address, "-o", "json").json()["data"]
    }
    assert balances == {"SOL": 2_000_000_000, "USDC": 12_500_000}
    for bad in (
        ["--sol", "1", "--token", "USDC"],
        ["--token", "USDC"],
        ["--token", "DOGE", "--amount", "1"],
        ["--sol", "-1"],
    ):
        result = run("sandbox", "airdrop", address, *bad)
        assert result.code == 2, (bad, result.stderr)


def test_completion_scripts_are_current():
    from yieldcli.cli.completion import SHELLS, script

    folder = Path(__file__).resolve().parents[3] / "completions"
    for shell, name in SHELLS.items():
        assert (folder / name).read_text() == script(shell), (
            f"completions/{name} is stale: python -m yieldcli.cli.completion completions"
        )
    assert (folder / "_yield").read_text().splitlines()[0] == "#compdef yield"


def test_completion_request_answers(run):
    result = run(env={"_YIELD_COMPLETE": "complete_bash", "COMP_WORDS": "yield pos", "COMP_CWORD": "1"})
    assert result.stdout.split() == ["positions"]


def test_version_and_help_with_examples(run):
    assert run("--version").stdout.startswith("yield ")
    for command in (
        ["positions"],
        ["balances"],
        ["earnings"],
        ["health"],
        ["strategy", "info"],
        ["auth", "login"],
        ["auth", "status"],
        ["auth", "logout"],
        ["config", "show"],
        ["config", "set"],
        ["config", "get"],
        ["config", "unset"],
        ["config", "path"],
        ["sandbox", "serve"],
        ["sandbox", "reset"],
        ["deposit"],
        ["withdraw"],
        ["close-account"],
        ["tx", "inspect"],
        ["tx", "sign"],
        ["tx", "send"],
        ["tx", "status"],
    ):
        result = run(*command, "--help")
        assert result.code == 0 and re.search(r"Example: .*yield", " ".join(result.stdout.split())), command


@pytest.mark.parametrize("mode", ["table", "json", "ndjson", "csv"])
def test_every_command_renders_in_every_output_mode(run, mode):
    env = {"YIELD_API_KEY": "abcdefghijklmnop1234"}
    commands = [
        ["auth", "status"],
        ["config", "show"],
        ["health"],
        ["strategy", "info"],
        ["positions"],
        ["balances"],
        ["earnings"],
        ["deposit", "--asset", "USDC", "--amount", "1"],
        ["withdraw", "--asset", "USDC", "--amount", "1"],
    ]
    for command in commands:
        result = run("--sandbox", *command, "-o", mode, env=env)
        assert result.code == 0, (command, result.stderr)
        assert result.stdout.strip(), command


def test_an_asset_symbol_yield_does_not_know_is_refused_before_any_request(api, sandbox):
    seen = []
    original = sandbox.service.handle

    def spy(method, path, query="", headers=None, body=b""):
        seen.append(query)
        return original(method, path, query, headers, body)

    sandbox.service.handle = spy
    from yieldcli.sandbox.demo import DEMO_WALLET

    result = api("balances", DEMO_WALLET, "--asset", "DOGE", "-o", "json")
    assert result.code == 2 and "known symbols: USDC" in result.error_lines()[-1]  # a typo is no empty list
    assert not any("asset=DOGE" in q for q in seen)
    # A symbol it knows is sent as the mint; the sandbox accepts either.
    usdc = api("balances", DEMO_WALLET, "--asset", "usdc", "-o", "json").json()["data"]
    assert [b["token_symbol"] for b in usdc] == ["USDC"]
