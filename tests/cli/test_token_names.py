"""A token the strategy lists that `yield` does not ship with is known by its own on-chain metadata: the
sandbox's second strategy lists SDX (Token-2022, its metadata extension in the mint) and SBOND (SPL Token,
a Metaplex metadata account). Before, `strategy info` showed both as "? unknown token", `--asset SDX`
was refused and completion left them out."""

from __future__ import annotations

import socket

from yieldcli.sandbox.demo import DEMO_WALLET, METADATA_TOKENS, SECOND_STRATEGY_ID

SDX, SBOND = (t[1] for t in METADATA_TOKENS)
SECOND = {"YIELD_STRATEGY": SECOND_STRATEGY_ID}


def test_strategy_info_names_each_listed_token_by_its_metadata(chain):
    table = chain("strategy", "info", SECOND_STRATEGY_ID, "-o", "table", env={"COLUMNS": "120"})
    assert table.code == 0, table.stderr
    rows = {line.split()[0]: line for line in table.stdout.splitlines() if SDX in line or SBOND in line}
    assert set(rows) == {"SDX", "SBOND"}, table.stdout
    assert "Sandbox Dollar" in rows["SDX"] and "Sandbox Bond" in rows["SBOND"]
    assert "unknown" not in table.stdout and table.stderr == ""


def test_asset_takes_their_symbols_in_reads_and_refuses_a_typo_naming_them(chain):
    sandbox_positions = chain("positions", DEMO_WALLET, "--asset", "sdx", "-o", "json", env=SECOND)
    assert sandbox_positions.code == 0, sandbox_positions.stderr
    typo = chain("balances", DEMO_WALLET, "--asset", "SDXX", "-o", "json", env=SECOND)
    assert typo.code == 2 and "SDX" in typo.error_lines()[-1] and "SBOND" in typo.error_lines()[-1]


def test_a_deposit_by_symbol_is_reviewed_in_that_symbol_and_lands(chain, sandbox):
    from solders.pubkey import Pubkey

    from yieldcli.sandbox.demo import demo_keypair

    sandbox.runtime.mint_to(demo_keypair().pubkey(), Pubkey.from_string(SBOND), 20_000_000)
    done = chain("deposit", "--asset", "SBOND", "--amount", "12.5", "--send", "--yes", "-o", "json", env=SECOND)
    assert done.code == 0, done.stderr
    body = done.json()
    assert body["status"] == "confirmed", body
    assert body["effect"]["summary"].startswith("deposit 12.5 SBOND "), body.get("effect")
    positions = chain("positions", "--asset", "SBOND", "-o", "json", env=SECOND).json()["data"]
    assert [p["total_deposited_value"] for p in positions] == [12_500_000]


def test_completion_offers_the_symbols_once_learned(chain, run):
    env = {"_YIELD_COMPLETE": "complete_bash", "COMP_WORDS": "yield\nbalances\n--asset\nS", "COMP_CWORD": "3"}
    assert "SDX" not in run(env=env).stdout.split()
    assert chain("strategy", "info", SECOND_STRATEGY_ID, "-o", "json").code == 0
    assert set(run(env=env).stdout.split()) >= {"SOL", "SDX", "SBOND"}


def test_a_chain_that_does_not_answer_is_one_warning_and_the_mints_are_shown(chain):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: refused
        done = chain(
            "strategy",
            "info",
            SECOND_STRATEGY_ID,
            "-o",
            "table",
            env={"YIELD_RPC_URL": f"http://127.0.0.1:{port}", "COLUMNS": "120"},
        )
    assert done.code == 0, done.stderr
    assert "were not read from the chain" in done.stderr and SDX in done.stderr
    assert "unknown token" in done.stdout and "USDC" in done.stdout


def test_tx_send_expect_takes_a_listed_symbol(chain, sandbox, tmp_path):
    from solders.pubkey import Pubkey

    from yieldcli.sandbox.demo import demo_keypair

    sandbox.runtime.mint_to(demo_keypair().pubkey(), Pubkey.from_string(SDX), 5_000_000)
    review = chain("deposit", "--asset", SDX, "--amount", "2", "-o", "json", env=SECOND)
    assert review.code == 0, review.stderr
    path = tmp_path / "sdx.json"
    path.write_text(review.stdout)
    checked = chain("tx", "send", str(path), "--yes", "--expect", "deposit:sdx:2", "-o", "json", env=SECOND)
    assert checked.code == 0, checked.stderr
    assert checked.json()["status"] == "confirmed" and "2 SDX" in checked.json()["effect"]["summary"]
