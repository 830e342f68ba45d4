"""What users of gh expect from a command in a script: --jq, `completion SHELL`, `--version -v`."""

import json
import os
import platform
import subprocess
from pathlib import Path

import pytest

from tests.conftest import YIELD
from yieldcli.sandbox.demo import WHALE_WALLET

COMPLETIONS = Path(__file__).resolve().parents[2] / "completions"


def test_jq_filters_json_output_strings_raw(run):
    symbols = run("--sandbox", "positions", "--jq", ".data[].token_symbol")
    assert symbols.code == 0, symbols.stderr
    assert symbols.stdout.splitlines()[:2] == ["USDC", "USDT"]  # raw, as gh and jq -r print strings
    one = run("--sandbox", "positions", "--jq", ".data[0] | {token_symbol, decimals}")
    assert one.code == 0 and json.loads(one.stdout) == {"token_symbol": "USDC", "decimals": 6}
    # NDJSON: the expression runs on every line; global options anywhere, as everywhere else.
    usdc = run("--sandbox", "positions", "--all", "-o", "ndjson", "--jq", 'select(.token_symbol == "USDC") | .decimals')
    assert usdc.code == 0 and usdc.stdout == "6\n"


def test_jq_keeps_integers_past_2_to_the_64_exact(run):
    plain = run("--sandbox", "balances", WHALE_WALLET, "--all", "-o", "json")
    huge = [item["total_balance"] for item in plain.json()["data"] if item["total_balance"] > 2**64]
    assert huge
    filtered = run(
        "--sandbox",
        "balances",
        WHALE_WALLET,
        "--all",
        "--jq",
        ".data[] | select(.total_balance > 18446744073709551615) | .total_balance",
    )
    assert filtered.code == 0, filtered.stderr
    assert [int(line) for line in filtered.stdout.split()] == huge


def test_jq_refuses_what_it_cannot_do_in_one_line(run):
    bad = run("--sandbox", "positions", "--jq", ".[")
    assert bad.code == 2 and "invalid --jq expression" in bad.error_lines()[0] and bad.stdout == ""
    table = run("--sandbox", "positions", "-o", "table", "--jq", ".")
    assert table.code == 2 and "--jq filters JSON" in table.error_lines()[0]
    failing = run("--sandbox", "positions", "--jq", ".[0]")  # an object is not an array
    assert failing.code == 2 and "--jq expression failed" in failing.error_lines()[0]


@pytest.mark.parametrize("shell,name", [("bash", "yield.bash"), ("zsh", "_yield"), ("fish", "yield.fish")])
def test_completion_prints_the_script_completions_holds(run, shell, name):
    """One source: what `yield completion SHELL` prints is, byte for byte, the file we ship."""
    printed = run("completion", shell)
    assert printed.code == 0, printed.stderr
    assert printed.stdout == (COMPLETIONS / name).read_text(encoding="utf-8")


def test_completion_of_an_unknown_shell_is_refused(run):
    result = run("completion", "tcsh")
    assert result.code == 2 and "bash, zsh, fish" in result.error_lines()[0]


def test_version_alone_is_one_line_and_with_v_names_what_a_bug_report_needs(run):
    from importlib import metadata

    short = run("--version")
    assert short.code == 0 and short.stdout.count("\n") == 1 and short.stdout.startswith("yield ")
    for args in (["--version", "-v"], ["-v", "--version"], ["--sandbox", "--version", "--verbose"]):
        long = run(*args)
        assert long.code == 0, long.stderr
        lines = long.stdout.splitlines()
        assert lines[0] == short.stdout.strip()
        assert f"python {platform.python_version()}" in lines[1]
        assert f"solders {metadata.version('solders')}" in lines
        assert f"solana-py {metadata.version('solana')}" in lines
        assert any(line.startswith("platform ") and platform.system() in line for line in lines)


def test_a_send_whose_reader_went_away_still_tells_its_signature(isolated):
    # `yield ... --send --yes -o json | true`: the reader is gone before the outcome is written.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [YIELD, "--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("stdout was closed before the outcome"))
    assert line.split()[-2] == "confirmed" and len(line.split()[-1]) >= 86  # the signature, base58


def _into_closed_pipes(*args: str, stdout_too: bool = True, env: dict[str, str] | None = None):
    """`yield ARGS 2>&1 | true`: stderr (and stdout) into a pipe whose reader has gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [YIELD, *args],
            stdout=write_end if stdout_too else subprocess.DEVNULL,
            stderr=write_end,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            timeout=120,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("wait", [[], ["--no-wait"]], ids=["waiting", "--no-wait"])
def test_a_send_told_to_no_one_stays_in_the_journal_and_the_next_one_asks(run, isolated, wait):
    # `... 2>&1 | true`: neither stdout nor stderr is read. The deposit lands, its signature reaches
    # no one, so its record stays: the next send reports it and sends no second deposit unasked.
    deposit = ["--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes"]
    first = _into_closed_pipes(*deposit, *wait)
    assert first.returncode == 0
    again = run(*deposit)
    assert again.code == 10 and "landed" in again.stderr and "--again" in again.stderr, again.stderr


def test_a_diagnostic_no_one_reads_does_not_replace_a_pending_outcome(isolated):
    # -v writes diagnostics to stderr after the wait; with its reader gone, the pending outcome (8)
    # once became the closed pipe's exit 0.
    pending = _into_closed_pipes(
        "-v",
        "--sandbox",
        "deposit",
        "--asset",
        "USDC",
        "--amount",
        "1",
        "--send",
        "--yes",
        "--confirm-timeout",
        "3",
        stdout_too=False,
        env={"YIELD_SANDBOX_DROP_SENDS": "1000"},
    )
    assert pending.returncode == 8
