"""The review's lifetime, on a real pseudo-terminal against the sandbox served over loopback: the question
says how long the transaction stays valid; a yes given after its blockhash passed (the sandbox's slots
moved on while the question was on screen) never signs it. A deposit is built again and, doing the
same, asked once more; a withdrawal of everything that no longer withdraws the same is refused; a
transaction handed over ends in exit 9. With --yes the review never waits on a pager."""

import fcntl
import json
import re
import struct
import termios
import time

from tests.cli.test_prompts import Terminal
from tests.conftest import usdc_position
from yieldcli.chain.transact.lifetime import QUICK_YES_SECONDS

UNIT = 1_000_000  # 1 USDC in base units
LIFETIME = re.compile(rb"Sign and send this deposit\? \(valid for about (\d+) s\) \[y/N\]")


def _past_its_blockhash(sandbox) -> None:
    """The chain moves past the last block height at which the transaction on screen could land, and
    the person answers late (a yes within a second of the question, with the lifetime it showed, is
    not asked about again: that many blocks cannot pass in a second)."""
    sandbox.runtime.advance_slots(sandbox.runtime.blockhash_window + 2)
    time.sleep(QUICK_YES_SECONDS + 0.2)


def test_a_yes_after_the_blockhash_passed_builds_the_deposit_again_and_asks_once_more(chain, chain_env, sandbox):
    before = usdc_position(chain)
    term = Terminal("deposit", "--asset", "USDC", "--amount", "1", "--send", env=chain_env)
    term.expect("[y/N]")
    shown = LIFETIME.search(term.screen)
    assert shown, term.screen
    assert 40 <= int(shown.group(1)) <= 61  # about 150 blocks of 400 ms, less what the review took
    _past_its_blockhash(sandbox)
    term.type("y\n")
    term.expect("It expired while it was reviewed; built again, it does the same.\r\nSign and send this deposit?")
    assert usdc_position(chain) == before  # nothing signed or sent on the first yes
    term.type("y\n")
    assert term.wait() == 0, term.screen
    assert usdc_position(chain) == before + UNIT  # one landing for one intent


def test_a_no_to_the_question_asked_again_sends_nothing(chain, chain_env, sandbox):
    before = usdc_position(chain)
    term = Terminal("deposit", "--asset", "USDC", "--amount", "1", "--send", env=chain_env)
    term.expect("[y/N]")
    _past_its_blockhash(sandbox)
    term.type("y\n")
    term.expect("built again, it does the same")
    term.type("n\n")
    assert term.wait() != 0
    assert usdc_position(chain) == before


def test_a_withdrawal_that_changed_while_it_was_reviewed_is_refused(chain, chain_env, sandbox):
    before = usdc_position(chain)
    term = Terminal("withdraw", "--asset", "USDC", "--all", "--send", env=chain_env)
    term.expect("Sign and send this withdrawal?")
    term.expect("[y/N]")
    # Meanwhile the position grows: everything is now 1 USDC more than what was reviewed.
    assert chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes").code == 0
    _past_its_blockhash(sandbox)
    term.type("y\n")
    assert term.wait() == 10, term.screen
    screen = term.screen.decode(errors="replace").replace("\r\n", "")
    assert "does not do the same: USDC:" in screen and "nothing was signed" in screen, screen
    assert usdc_position(chain) == before + UNIT  # the deposit only: the withdrawal was never signed


def test_a_transaction_handed_over_whose_blockhash_passed_in_review_ends_in_exit_9(chain, chain_env, sandbox, tmp_path):
    made = chain("deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    assert made.code == 0, made.stderr
    path = tmp_path / "unsigned.json"
    path.write_text(made.stdout)
    before = usdc_position(chain)
    term = Terminal("tx", "send", str(path), "--expect", "deposit:USDC:1", "-o", "json", env=chain_env)
    term.expect("(valid for about")
    term.expect("[y/N]")
    _past_its_blockhash(sandbox)
    term.type("y\n")
    assert term.wait() == 9, term.screen
    screen = term.screen.decode(errors="replace").replace("\r\n", "")
    error = json.loads(screen[screen.rindex('{"error"') :])["error"]
    assert error["kind"] == "tx.expired.review" and error["code"] == 9
    assert "passed while it was reviewed" in error["message"] and "until block height" in error["message"]
    assert "nothing was signed" in error["message"] and "build it again" in error["hint"]
    assert usdc_position(chain) == before


def test_with_yes_the_review_never_waits_on_a_pager(chain, chain_env, tmp_path):
    before = usdc_position(chain)
    started = tmp_path / "pager-started"
    pager = f"sh -c 'touch {started}; cat >/dev/null'"  # would it be started, it is seen; it swallows the review
    env = {**chain_env, "YIELD_PAGER": pager, "TERM": "xterm-256color"}
    term = Terminal("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", env=env)
    # A screen of 8 lines (set before the command has read it): the review is longer.
    fcntl.ioctl(term.master, termios.TIOCSWINSZ, struct.pack("HHHH", 8, 100, 0, 0))
    assert term.wait() == 0, term.screen
    assert not started.exists()
    assert b"fee payer" in term.screen  # the review was still drawn, straight on the terminal
    assert usdc_position(chain) == before + UNIT
