"""On a real pseudo-terminal: the review comes before any prompt, and a send after one that landed is asked."""

from tests.cli.commands.test_write_journal import UNIT, killed_while_pending
from tests.cli.test_prompts import Terminal
from tests.conftest import usdc_position


def test_with_json_output_the_review_is_shown_on_the_terminal_before_the_prompt(chain, chain_env):
    before = usdc_position(chain)
    term = Terminal("deposit", "--asset", "USDC", "--amount", "1", "--send", "-o", "json", env=chain_env)
    term.expect("Sign and send this deposit?")
    screen = term.screen.decode(errors="replace")
    prompt = screen.index("Sign and send this deposit?")
    assert 0 <= screen.find("fee payer") < prompt and 0 <= screen.find("simulation") < prompt
    term.type("n\n")
    assert term.wait() != 0
    assert usdc_position(chain) == before


def test_after_an_earlier_deposit_landed_a_terminal_asks_before_sending_another(chain, chain_env, sandbox):
    before = usdc_position(chain)
    signature = killed_while_pending(chain_env, sandbox)
    sandbox.runtime.release_pending()

    term = Terminal("deposit", "--asset", "USDC", "--amount", "1", "--send", env=chain_env)
    term.expect("Sign and send this deposit?")
    term.type("y\n")
    term.expect("Send another deposit anyway?")
    assert f"your earlier deposit {signature} landed in slot" in term.screen.decode(errors="replace").replace(
        "\r\n", ""
    )
    term.type("n\n")
    assert term.wait() == 12
    assert usdc_position(chain) == before + UNIT

    term = Terminal("deposit", "--asset", "USDC", "--amount", "1", "--send", env=chain_env)
    term.expect("Sign and send this deposit?")
    term.type("y\n")
    term.expect("Send another deposit anyway?")
    term.type("y\n")
    assert term.wait() == 0, term.screen
    assert usdc_position(chain) == before + 2 * UNIT
