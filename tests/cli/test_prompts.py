"""`yield` on a real pseudo-terminal: hidden prompts, and asking before signing."""

import ctypes
import fcntl
import os
import pty
import select
import signal
import subprocess
import termios
import time

import pytest

from tests.conftest import TEST_API_KEY, YIELD
from tests.library.wallet import usdc_balance


def _terminal_child() -> None:
    """In the child: the pty becomes its controlling terminal, and Ctrl-C interrupts as on a fresh
    terminal, even when this test run was started in the background (which ignores SIGINT)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _default_sigint() -> None:
    """In the child: Ctrl-C's signal acts, even when this test run was started in the background."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """A command on a pseudo-terminal (stdin, stdout and stderr), read and typed into like a person."""

    def __init__(self, *args: str, env: dict[str, str] | None = None):
        self.master, slave = pty.openpty()
        # A session of its own with the pty as controlling terminal: getpass reads /dev/tty.
        self.proc = subprocess.Popen(
            [YIELD, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**os.environ, "TERM": "dumb", **(env or {})},
            close_fds=True,
            start_new_session=True,
            preexec_fn=_terminal_child,
        )
        os.close(slave)
        self.screen = b""

    def expect(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.screen:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"did not see {text!r}; screen: {self.screen.decode(errors='replace')!r}"
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    self.screen += os.read(self.master, 4096)
                except OSError:  # the command exited and closed the terminal
                    break
        assert text.encode() in self.screen, self.screen

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def wait(self, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.screen += os.read(self.master, 4096)
                except OSError:
                    break
        code = self.proc.wait(timeout=max(1, deadline - time.monotonic()))
        os.close(self.master)
        return code


def test_auth_login_prompt_hides_the_key(run):
    term = Terminal("auth", "login")
    term.expect("API key: ")  # the space comes from getpass, once echo is off
    term.type(TEST_API_KEY + "\n")
    assert term.wait() == 0
    assert TEST_API_KEY.encode() not in term.screen  # not echoed, not printed
    status = run("auth", "status", "-o", "json")
    assert status.code == 0 and status.json()["source"] == "keyring"


def test_sending_on_a_terminal_asks_first_and_no_means_nothing_is_sent(run):
    before = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"][0]["total_position_value"]
    term = Terminal("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--send", "-o", "json")
    term.expect("Sign and send this deposit?")
    term.type("n\n")
    assert term.wait() == 12
    assert b"declined; nothing was signed" in term.screen
    after = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"][0]["total_position_value"]
    assert after == before

    term = Terminal("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--send", "-o", "json")
    term.expect("Sign and send this deposit?")
    term.type("y\n")
    assert term.wait() == 0, term.screen
    final = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"][0]["total_position_value"]
    assert final == before + 1_000_000


def test_tables_are_the_default_on_a_terminal():
    term = Terminal("--sandbox", "balances")
    assert term.wait() == 0
    assert b"Balances" in term.screen and b"page 1 of 2, 15 balances: use --all" in term.screen


def test_ctrl_c_at_the_prompt_ends_at_once_and_nothing_is_signed(run):
    before = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"][0]["total_position_value"]
    term = Terminal("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--send")
    term.expect("Sign and send this deposit?")
    started = time.monotonic()
    term.type("\x03")  # Ctrl-C: the terminal sends SIGINT to the command
    assert term.wait(timeout=5) == 130, term.screen
    assert time.monotonic() - started < 5
    assert b"declined; nothing was signed" in term.screen and b"Traceback" not in term.screen
    after = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"][0]["total_position_value"]
    assert after == before


def test_ctrl_c_handed_to_another_thread_still_ends_the_question(run):
    """The kernel may give a terminal's SIGINT to any thread of the process (the sandbox's servers,
    the HTTP pool's): the question must end all the same, not wait for Enter."""
    before = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"][0]["total_position_value"]
    term = Terminal("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--send")
    term.expect("Sign and send this deposit?")
    others = sorted(int(tid) for tid in os.listdir(f"/proc/{term.proc.pid}/task") if int(tid) != term.proc.pid)
    assert others, "the command runs more than one thread at the question"
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.tgkill(term.proc.pid, others[-1], signal.SIGINT) == 0, os.strerror(ctypes.get_errno())
    assert term.wait(timeout=5) == 130, term.screen
    assert b"declined; nothing was signed" in term.screen and b"Traceback" not in term.screen
    after = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"][0]["total_position_value"]
    assert after == before


def test_a_yes_typed_before_the_question_does_not_answer_it(run):
    before = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"][0]["total_position_value"]
    term = Terminal("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--send")
    term.type("y\n")  # pressed while the review was still coming: it must not sign
    term.expect("Sign and send this deposit?")
    term.type("n\n")
    assert term.wait() == 12, term.screen
    assert b"declined; nothing was signed" in term.screen
    after = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"][0]["total_position_value"]
    assert after == before


def test_an_unclear_answer_is_asked_again_and_end_of_input_is_a_no():
    term = Terminal("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--send")
    term.expect("Sign and send this deposit?")
    term.type("maybe\n")
    # Keys count once the question is on screen again (what comes before is flushed): wait for it.
    term.expect("please answer y or n\r\nSign and send this deposit? (valid for about ")
    deadline = time.monotonic() + 30
    while b"[y/N]:" not in term.screen.split(b"please answer y or n")[-1]:  # the question, asked again
        assert time.monotonic() < deadline, term.screen
        if select.select([term.master], [], [], 0.1)[0]:
            term.screen += os.read(term.master, 4096)
    term.type("\x04")  # Ctrl-D
    assert term.wait() == 12, term.screen
    assert term.screen.count(b"Sign and send this deposit? (valid for about ") == 2
    assert b"declined; nothing was signed" in term.screen


def test_close_account_asks_on_a_terminal_and_says_what_comes_back(run):
    term = Terminal("--sandbox", "close-account", "--asset", "USDT", "--send", "-o", "json")
    term.expect("Sign and send this account closing?")
    screen = term.screen.decode().replace("\r", "")
    assert "close the USDT fund account of 5PJ1…Vr9k" in screen
    # the position account's rent (128 bytes: 0.00178176 SOL) less the fee, on a line the terminal may wrap
    assert "+1,218.904117 USDT and +0.00177676 SOL back to you" in " ".join(screen.split()), screen
    term.type("n\n")
    assert term.wait() == 12
    refused = run("--sandbox", "close-account", "--asset", "USDT", "--sign")  # off a terminal: --yes first
    assert refused.code == 2 and "--yes" in refused.stderr


def test_sigterm_after_the_send_is_confirmed_still_shows_the_signature(chain, chain_env, sandbox):
    """Between the end of the wait and the outcome on screen (here the position's refresh, held 3 s by
    the service), SIGTERM once killed the run: money moved, nothing in the journal, no signature."""
    before = usdc_balance(sandbox)
    term = Terminal("deposit", "--asset", "USDC", "--amount", "1", "--send", env=chain_env)
    term.expect("Sign and send this deposit?")
    sandbox.add_fault("GET", r"^/breeze-balances/", 500, '{"message": "slow"}', times=1, delay_s=3)
    term.type("y\n")
    deadline = time.monotonic() + 60
    while usdc_balance(sandbox) == before:  # landed on chain: the refresh, held 3 s, comes next
        assert time.monotonic() < deadline, term.screen
        time.sleep(0.02)
    time.sleep(0.5)
    term.proc.send_signal(signal.SIGTERM)
    assert term.wait(timeout=30) == 130, term.screen
    screen = term.screen.decode(errors="replace")
    assert "confirmed " in screen and "interrupted (SIGTERM) after the outcome above" in screen, screen
    assert before - usdc_balance(sandbox) == 1_000_000


@pytest.mark.parametrize("end", ["SIGKILL", "SIGTERM twice", "SIGINT twice"])
def test_a_run_killed_before_its_outcome_is_shown_leaves_the_record_for_the_next(
    chain, chain_env, sandbox, isolated, end
):
    """Killed (SIGKILL, a closed terminal, a lost SSH session, or SIGTERM twice: the second does not
    wait for a held refresh) after the send landed but before its outcome was shown: the journal
    keeps the record, and the next send reports it and asks before another."""
    before = usdc_balance(sandbox)
    sandbox.add_fault("GET", r"^/breeze-balances/", 500, '{"message": "slow"}', times=None, delay_s=5)
    journal = isolated / ".local" / "share" / "yield" / "in-flight.json"
    command = [YIELD, "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes"]
    proc = subprocess.Popen(
        command, env=chain_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_default_sigint
    )
    deadline = time.monotonic() + 60
    while usdc_balance(sandbox) == before:  # landed: the refresh, held 5 s, comes next
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    time.sleep(0.5)
    if end == "SIGKILL":
        proc.kill()
    else:
        number = signal.SIGTERM if end == "SIGTERM twice" else signal.SIGINT
        proc.send_signal(number)
        time.sleep(0.2)
        proc.send_signal(number)
    ended = {"SIGKILL": -signal.SIGKILL, "SIGTERM twice": -signal.SIGTERM, "SIGINT twice": 130}[end]
    assert proc.wait(timeout=3) == ended  # by the signal, not after the 5 s the refresh is held
    sandbox.clear_faults()
    assert "signature" in journal.read_text()  # the record outlived the run that did not show it
    again = chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes")
    assert again.code == 10 and "landed" in again.stderr and "--again" in again.stderr, again.stderr
    assert before - usdc_balance(sandbox) == 1_000_000  # nothing sent twice
