"""At a real terminal (tmux) narrower than a table's rows, each row is a block of `Header: value` lines
(nothing hidden, nothing wrapped mid-number); messages wrap at word boundaries. At 40 columns every
positions row wrapped, and a long error broke mid-word at 80."""

from __future__ import annotations

import re

import pytest

from tests.cli.tmux import TMUX, Screen

pytestmark = pytest.mark.skipif(
    not TMUX, reason="tmux is not installed (the README's test command installs it as root)"
)


def screen_of(tmp_path, width: int, command: str) -> list[str]:
    screen = Screen(tmp_path, width=width, height=120)
    try:
        text = screen.run(command)
    finally:
        screen.close()
    return [line.rstrip() for line in text.split("\n")]


def test_at_40_columns_positions_are_stacked_whole(tmp_path, isolated):
    lines = screen_of(tmp_path, 40, "yield --sandbox positions --no-pager --limit 3")
    assert "__done__0" in lines
    assert all(len(line) <= 40 for line in lines)
    assets = [line for line in lines if line.startswith("Asset:")]
    assert [a.split()[-1] for a in assets] == ["USDC", "USDT", "USDS"], lines
    # Every column is there (none "not shown"), each value on its header's line, amounts whole.
    assert not any(line.startswith("not shown") for line in lines)
    for header in ("Strategy:", "Deposited:", "Value:", "Yield earned:", "APY:", "Fund:", "Updated:"):
        assert sum(line.startswith(header) for line in lines) == 3, (header, lines)
    assert re.search(r"^Value:\s+2,547\.318402$", "\n".join(lines), re.M), lines


def test_at_80_columns_positions_stay_a_table(tmp_path, isolated):
    lines = screen_of(tmp_path, 80, "yield --sandbox positions --no-pager --limit 3")
    assert any(line.startswith("Asset") and "Deposited" in line and "Value" in line for line in lines), lines
    assert not any(line.startswith("Asset:") for line in lines)


def test_a_long_error_wraps_at_word_boundaries(tmp_path, isolated, run):
    whole = run("--sandbox", "balances", "--asset", "FOO", "-o", "json").error_lines()[-1]  # one line off a terminal
    lines = screen_of(tmp_path, 60, "yield --sandbox balances --asset FOO")
    at = next(i for i, line in enumerate(lines) if line.startswith("error:"))
    message = lines[at : lines.index("__done__2")]
    assert len(message) > 1 and all(len(line) <= 60 for line in message), message
    assert " ".join(message).split() == whole.split(), message  # no word cut in two


def test_off_a_terminal_the_error_stays_one_line(run):
    done = run("--sandbox", "balances", "--asset", "FOO", "-o", "json")
    assert done.code == 2 and len(done.stderr.strip().splitlines()) == 2  # the line and its JSON object
