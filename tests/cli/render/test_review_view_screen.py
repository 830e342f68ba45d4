"""The `--send` review as a person reads it on a real 80-column terminal (tmux), up to its prompt:
nothing the program writes is wider than the screen, so the terminal never breaks a word or a value."""

import re

import pytest

from tests.cli.render.test_output_screen import logical_lines
from tests.cli.tmux import TMUX, Screen

pytestmark = pytest.mark.skipif(
    not TMUX, reason="tmux is not installed (the README's test command installs it as root)"
)

PROMPT = "Sign and send this deposit? (valid for about "  # then how long, and [y/N]


def at_the_prompt(tmp_path, flags: str = "", height: int = 120):
    """The screen of `deposit --send` at 80 columns, stopped at its prompt, as the program wrote it;
    answered no afterwards."""
    s = Screen(tmp_path, width=80, height=height)
    try:
        s.type(f"clear; yield --sandbox {flags}deposit --asset USDC --amount 10 --send", "Enter")
        s.wait_for(PROMPT, timeout=90)
        yield s, logical_lines(s)
        s.type("n", "Enter")
        s.wait_for("declined; nothing was signed")
    finally:
        s.close()


@pytest.fixture
def send_review(tmp_path):
    yield from at_the_prompt(tmp_path)


def test_no_line_of_the_send_review_is_wider_than_the_screen(send_review):
    _, lines = send_review
    too_wide = [line for line in lines if len(line) > 80]
    assert not too_wide, "\n".join(too_wide)


def test_the_review_up_to_its_prompt_fits_25_lines(send_review):
    _, lines = send_review
    start = next(i for i, line in enumerate(lines) if line.startswith("deposit 10 USDC from "))
    at = next(i for i, line in enumerate(lines) if line.startswith(PROMPT))
    assert at - start + 1 <= 25, "\n".join(lines[start : at + 1])
    assert lines[start + 5].startswith("Review: deposit on sandbox (message v0, blockhash ")


def test_answering_yes_confirms_with_no_explorer_link_for_the_local_cluster(tmp_path):
    s = Screen(tmp_path, width=80, height=60)
    try:
        s.type("clear; yield --sandbox deposit --asset USDC --amount 10 --send", "Enter")
        s.wait_for(PROMPT, timeout=90)
        s.type("y", "Enter")
        screen = s.wait_for("APY (variable)", timeout=90)
        assert re.search(r"^confirmed \w+", "\n".join(logical_lines(s)), re.M), screen
        assert "explorer" not in screen and "127.0.0.1" not in screen
    finally:
        s.close()


@pytest.fixture
def full_review(tmp_path):
    """The whole review (-v)."""
    yield from at_the_prompt(tmp_path, "-v ", height=150)


def test_a_long_value_wraps_whole_under_itself(full_review):
    _, lines = full_review
    head = "      strategy_key: "
    start = next(i for i, line in enumerate(lines) if line.startswith(head))
    indent = " " * len(head)
    pieces = [lines[start].removeprefix(head)]
    pieces += [line.removeprefix(indent) for line in lines[start + 1 :] if line.startswith(indent)][:2]
    assert re.fullmatch(r"[0-9a-f]{64}", "".join(pieces)), lines[start : start + 3]
    assert len(pieces) == 2  # one hex key, two lines, the second under the first


def test_the_summary_above_the_prompt_is_one_part_a_line(send_review):
    _, lines = send_review
    at = next(i for i, line in enumerate(lines) if line.startswith(PROMPT))
    assert lines[at - 2].startswith("deposit 10 USDC from ") and lines[at - 2].endswith(
        "to strategy sandbox-0000-4000-8000-000000000001"
    )
    assert lines[at - 1] == "  fee 0.000005 SOL"


def test_an_instruction_verdict_longer_than_the_screen_wraps_under_its_mark(send_review):
    _, lines = send_review
    # The strategy program's verdict is longer than 80 columns at its indent: what does not fit goes on a
    # line of its own, under the text after the mark, not back at the left edge.
    first = next(i for i, line in enumerate(lines) if "✓ the strategy's deposit of strategy" in line)
    margin = lines[first].index("✓")
    following = lines[first + 1]
    assert following.startswith(" " * (margin + 2)) and following[margin + 2] != " ", "\n".join(
        lines[first - 1 : first + 3]
    )
