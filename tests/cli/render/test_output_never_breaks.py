"""Output that never breaks: a stdout that cannot encode Unicode, a reader that closes the pipe."""

import json
import subprocess

import pytest

from tests.cli.tmux import TMUX, Screen
from tests.conftest import YIELD


def _ascii_only(text: str) -> bool:
    return all(ord(c) < 128 for c in text)


@pytest.mark.process
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


@pytest.mark.process
def test_json_on_an_ascii_stdout_stays_exact(run):
    """The machine formats escape what the stream cannot encode as JSON itself does: same data."""
    plain = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    ascii_ = run(
        "--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "-o", "json", env={"PYTHONIOENCODING": "ascii"}
    )
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


@pytest.mark.parametrize(
    "mode", [["-o", "ndjson"], ["-o", "json"], ["-o", "csv"], ["-o", "table"], ["--jq", ".data[]"]]
)
def test_a_closed_pipe_ends_quietly_with_0(isolated, mode):
    """`yield balances --all | head -1`: the reader is gone before everything is written."""
    writer = subprocess.Popen(
        [YIELD, "--sandbox", "balances", "--all", *mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
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
    """On a 12-line terminal the deposit's review goes through the pager (less, the default); the
    [y/N] question comes only once the pager is closed, so nothing scrolls away unread."""
    screen = Screen(tmp_path, width=100, height=12, env={"PAGER": "less -FRX"})  # the default pager
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


def test_an_unknown_mint_s_decimals_are_read_from_the_chain(api, sandbox, tmp_path):
    """As spl-token does: a mint that is no known token and not in the wallet's balances gets its
    decimals from its mint account, so --amount in token units works without --raw."""
    from solders.account import Account
    from solders.keypair import Keypair
    from solders.pubkey import Pubkey

    from tests.conftest import write_keypair
    from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair
    from yieldcli.solana.programs import TOKEN_PROGRAM

    mint = Keypair().pubkey()
    data = bytearray(82)
    data[44], data[45] = 3, 1  # decimals, initialized
    sandbox.runtime.set_account(
        mint, Account(lamports=1_461_600, data=bytes(data), owner=Pubkey.from_string(TOKEN_PROGRAM), executable=False)
    )
    env = {
        "YIELD_RPC_URL": sandbox.rpc_url,
        "YIELD_STRATEGY": DEMO_STRATEGY_ID,
        "YIELD_KEYPAIR": write_keypair(tmp_path / "demo.json", demo_keypair()),
    }
    too_fine = api("deposit", "--asset", str(mint), "--amount", "1.5555", env=env)
    assert too_fine.code == 2, too_fine.stderr
    assert "has 4 fraction digits but the token has 3 decimals" in too_fine.error_lines()[0]
    # Converted (1500 base units) and asked for: the sandbox's strategy does not take this token.
    asked = api("-v", "deposit", "--asset", str(mint), "--amount", "1.5", env=env)
    assert "--raw" not in asked.stderr and "POST" in asked.stderr and asked.code == 5, asked.stderr
    not_a_mint = api("deposit", "--asset", str(Keypair().pubkey()), "--amount", "1", env=env)
    assert not_a_mint.code == 2 and "is not a token mint on the RPC" in not_a_mint.error_lines()[0]


def test_amounts_are_written_one_way_in_the_effect_line_the_review_and_the_tables(run):
    """Grouped by thousands, one minus sign (`-`), in the summary, the effect line, the instruction's
    details and the simulated balance table; JSON keeps integers for base units, text for decimals."""
    review = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1250.5", "-o", "table")
    assert review.code == 0, review.stderr
    text = review.stdout
    assert "deposit 1,250.5 USDC from" in text and "your USDC: -1,250.5 USDC" in text
    assert "amount: 1,250.5 USDC" in text and "-1,250.50" in text  # the table keeps two places to align points
    whole = run("--sandbox", "-v", "deposit", "--asset", "USDC", "--amount", "1250.5", "-o", "table").stdout
    assert "ui_amount: 1,250.5" in whole  # every detail, with -v
    assert "−" not in text  # no second minus sign
    body = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1250.5", "-o", "json").json()
    usdc = next(c for c in body["effect"]["observed"]["changes"] if c["asset"] == "USDC")
    assert usdc == {"asset": "USDC", "mint": usdc["mint"], "change": -1_250_500_000, "text": "-1,250.5 USDC"}
    transfer = next(ix for ix in body["review"]["instructions"] if ix["kind"] == "deposit")[
        "details"
    ]  # the strategy program's
    assert transfer["amount"] == 1_250_500_000 and transfer["ui_amount"] == "1250.500000"
    assert all(isinstance(body["fee"][k], int) for k in ("base", "priority", "total"))
