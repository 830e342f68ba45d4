"""Output that never breaks: a stdout that cannot encode Unicode, a reader that closes the pipe."""

import json
import subprocess

import pytest

from tests.cli.tmux import TMUX, Screen
from tests.conftest import YIELD


def _ascii_only(text: str) -> bool:
    return all(ord(c) < 128 for c in text)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_tables_and_reviews_fall_back_to_ascii(run, encoding):
    env = {"PYTHONIOENCODING": encoding}
    table = run("--sandbox", "positions", "-o", "table", env=env)
    assert table.code == 0, table.stderr
    assert "UnicodeEncodeError" not in table.stderr and _ascii_only(table.stdout)
    rule = next(line for line in table.stdout.splitlines() if line.startswith("---"))
    assert set(rule) == {"-"}
    review = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "-o", "table", env=env)
    assert review.code == 0, review.stderr
    # The effect line's minus and the shortened wallet's ellipsis have their ASCII look-alikes.
    assert "your USDC: -1 USDC" in review.stdout and "5PJ1...Vr9k" in review.stdout
    assert _ascii_only(review.stdout) and _ascii_only(review.stderr)


def test_json_on_an_ascii_stdout_stays_exact(run):
    """The machine formats escape what the stream cannot encode as JSON itself does: same data."""
    plain = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    ascii_ = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "-o", "json",
                 env={"PYTHONIOENCODING": "ascii"})
    assert plain.code == ascii_.code == 0, ascii_.stderr
    assert not _ascii_only(plain.stdout) and _ascii_only(ascii_.stdout)
    one, two = json.loads(plain.stdout), json.loads(ascii_.stdout)
    assert one["effect"]["summary"] == two["effect"]["summary"]
    assert "…" in two["effect"]["summary"]


@pytest.mark.skipif(not TMUX, reason="tmux is not installed (the README's test command installs it as root)")
def test_an_ascii_terminal_gets_ascii_tables(tmp_path):
    screen = Screen(tmp_path, width=120, env={"PYTHONIOENCODING": "ascii"})
    try:
        text = screen.run("yield --sandbox positions")
    finally:
        screen.close()
    assert "__done__0" in text, text
    assert "Positions" in text and "-" * 40 in text and "UnicodeEncodeError" not in text


@pytest.mark.parametrize("mode", ["ndjson", "json", "csv", "table"])
def test_a_closed_pipe_ends_quietly_with_0(isolated, mode):
    """`yield balances --all | head -1`: the reader is gone before everything is written."""
    writer = subprocess.Popen([YIELD, "--sandbox", "balances", "--all", "-o", mode],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert writer.stdout is not None and writer.stderr is not None
    writer.stdout.close()  # as `head` does once it has its line
    err = writer.stderr.read().decode()
    assert writer.wait(timeout=60) == 0, err
    assert err == ""


def test_balances_tell_native_sol_from_wrapped_sol(run):
    table = run("--sandbox", "balances", "--all", "-o", "table")
    assert table.code == 0, table.stderr
    rows = {line.split("  ")[0]: line for line in table.stdout.splitlines()}
    assert "Solana" in rows["SOL (native)"] and "Wrapped SOL" in rows["SOL"]
    one = run("--sandbox", "balances", "--asset", "SOL", "-o", "table")
    assert one.code == 0 and "Wrapped SOL" in one.stdout and "SOL (native)" not in one.stdout
    assert "--asset SOL is wrapped SOL (So11111111111111111111111111111111111111112)" in one.stderr
    assert "for native SOL use --asset 11111111111111111111111111111112" in one.stderr
    native = run("--sandbox", "balances", "--asset", "11111111111111111111111111111112", "-o", "table")
    assert native.code == 0 and "SOL (native)" in native.stdout and "Wrapped" not in native.stdout


@pytest.mark.skipif(not TMUX, reason="tmux is not installed (the README's test command installs it as root)")
def test_a_review_longer_than_the_screen_is_paged_before_the_prompt(tmp_path):
    """On a 20-line terminal the deposit's review goes through the pager (less, the default); the
    [y/N] question comes only once the pager is closed, so nothing scrolls away unread."""
    screen = Screen(tmp_path, width=100, height=20, env={"PAGER": "less -FRX"})  # the default pager
    try:
        screen.type('clear; yield --sandbox deposit --asset USDC --amount 1 --send; echo __do""ne__$?', "Enter")
        first = screen.wait_for("Review: deposit", timeout=90)
        assert "[y/N]" not in first  # the pager holds the screen: no question under an unread review
        screen.type("q")
        asked = screen.wait_for("[y/N]", timeout=30)
        assert "Sign and send this deposit?" in asked
        screen.type("n", "Enter")
        done = screen.wait_for("__done__", timeout=60)
    finally:
        screen.close()
    assert "__done__12" in done and "nothing was signed" in done
