"""Many wallets in a table, as a person reads it on a real 80-column terminal (tmux): a wallet with
nothing takes one line, the others their table, and the APY note is said once, at the end."""

import pytest

from tests.cli.render.test_output_screen import logical_lines
from tests.cli.tmux import TMUX, Screen

pytestmark = pytest.mark.skipif(
    not TMUX, reason="tmux is not installed (the README's test command installs it as root)"
)

APY_NOTE = "APY (variable): it changes over time and is not guaranteed."


def test_thirty_empty_wallets_take_a_line_each_and_the_apy_note_is_said_once(tmp_path):
    from solders.keypair import Keypair

    from yieldcli.sandbox.demo import DEMO_WALLET

    empty = [str(Keypair().pubkey()) for _ in range(30)]
    listed = tmp_path / "w.txt"
    listed.write_text("\n".join([*empty[:15], DEMO_WALLET, *empty[15:]]) + "\n")
    s = Screen(tmp_path, width=80, height=120)
    try:
        text = s.run(f"yield --sandbox balances --wallets-file {listed} --all")
        assert "__done__0" in text, text
        lines = logical_lines(s)
    finally:
        s.close()
    for wallet in empty:
        assert lines.count(f"{wallet}  no balances") == 1, "\n".join(lines)
    assert lines.count(APY_NOTE) == 1 and lines.count("Balances") == 1
    assert lines[lines.index(DEMO_WALLET) - 1] == ""  # its table stands apart from the one-line wallets
    drawn = [line for line in lines if line and not line.startswith(("clear;", "__done__", "$"))]
    table = lines.index(APY_NOTE) - lines.index(DEMO_WALLET)  # the demo wallet's table, up to the note
    assert len(drawn) <= 30 + 1 + table + 1, "\n".join(drawn)  # one line per empty wallet, a blank, the note
