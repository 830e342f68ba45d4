"""The write side as users run it: the `yield` command against the sandbox's service and its real
Solana runtime (LiteSVM) served over loopback JSON-RPC."""

import base64
import json
import re
import subprocess
from pathlib import Path

import pytest
from solders.keypair import Keypair
from solders.transaction import VersionedTransaction

from tests.conftest import usdc_position, write_keypair
from tests.library.node import node_with
from yieldcli.sandbox.demo import DEMO_WALLET

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
JS_DIR = Path(__file__).resolve().parents[2] / "js"


def signed_ok(b64: str) -> bool:
    return all(VersionedTransaction.from_bytes(base64.b64decode(b64)).verify_with_results())


@pytest.mark.parametrize("ix", [False, True], ids=["tx", "ix"])
def test_review_only_is_the_default_and_shows_what_would_be_signed(chain, ix):
    result = chain("deposit", "--asset", "USDC", "--amount", "10", "-o", "json", *(["--ix"] if ix else []))
    assert result.code == 0, result.stderr
    body = result.json()
    review = body["review"]
    assert body["status"] == "unsigned"
    assert review["fee_payer"] == DEMO_WALLET
    assert [s["address"] for s in review["signers"]] == [DEMO_WALLET]
    assert not review["signers"][0]["signed"]
    deposits = [ix for ix in review["instructions"] if ix["program"] == "Sandbox strategy program"]
    assert [ix["kind"] for ix in deposits] == ["deposit"]
    assert deposits[0]["details"]["amount"] == 10_000_000 and deposits[0]["details"]["ui_amount"] == "10.000000"
    assert deposits[0]["details"]["user"] == DEMO_WALLET
    assert body["simulation"]["ok"] is True and body["simulation"]["units_consumed"] > 0
    # the base64 transaction is there, unsigned
    assert not signed_ok(body["transaction"])


def test_review_table_names_programs_and_simulation(chain):
    result = chain("deposit", "--asset", "USDC", "--amount", "10", "-o", "table")
    assert result.code == 0, result.stderr
    assert "fee payer" in result.stdout and "simulation: success" in result.stdout
    assert (
        re.search(r"^ +writes: source [\w…]{9,44}, vault [\w…]{9,44}, position [\w…]{9,44}$", result.stdout, re.M)
        and "Sandbox strategy program" in result.stdout
    )
    assert "not resolved" not in result.stdout  # lookup-table accounts are read back through the RPC


def test_sign_prints_a_signed_transaction_without_sending(chain):
    before = usdc_position(chain)
    result = chain("deposit", "--asset", "USDC", "--amount", "10", "--sign", "-o", "json")
    assert result.code == 0, result.stderr
    body = result.json()
    assert body["status"] == "signed" and body["missing_signers"] == [] and signed_ok(body["transaction"])
    assert usdc_position(chain) == before


@pytest.mark.parametrize("ix", [False, True], ids=["tx", "ix"])
def test_deposit_send_confirms_and_shows_the_refreshed_position(chain, ix):
    before = usdc_position(chain)
    result = chain(
        "deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes", "-o", "json", *(["--ix"] if ix else [])
    )
    assert result.code == 0, result.stderr
    body = result.json()
    assert body["status"] == "confirmed" and body["signature"] and body["slot"] > 0
    assert body["explorer"] is None  # the sandbox is a local cluster: no public explorer link
    assert body["position"]["total_position_value"] == before + 10_000_000
    assert usdc_position(chain) == before + 10_000_000


@pytest.mark.parametrize("asset, amount, ix", [("USDT", "2.5", []), ("JitoSOL", "0.5", ["--ix"])], ids=["tx", "ix"])
def test_deposit_withdraw_close_round_trip(chain, asset, amount, ix):
    deposit = chain("deposit", "--asset", asset, "--amount", amount, "--send", "--yes", *ix)
    assert deposit.code == 0, deposit.stderr
    withdraw = chain("withdraw", "--asset", asset, "--all", "--send", "--yes", "-o", "json", *ix)
    assert withdraw.code == 0, withdraw.stderr
    assert withdraw.json()["position"]["total_position_value"] == 0
    refused = chain("close-account", "--asset", asset, "--send", *ix)
    assert refused.code == 2 and "--yes" in refused.stderr
    review = chain("close-account", "--asset", asset, "-o", "json", *ix)
    assert review.code == 0 and review.json()["status"] == "unsigned"
    closed = chain("close-account", "--asset", asset, "--send", "--yes", "-o", "json", *ix)
    assert closed.code == 0, closed.stderr
    assert closed.json()["status"] == "confirmed"
    assert [
        i["kind"] for i in closed.json()["review"]["instructions"] if i["program"] == "Sandbox strategy program"
    ] == ["close"]


def test_withdraw_tx_mode_partial(chain):
    before = usdc_position(chain)
    result = chain("withdraw", "--asset", "USDC", "--amount", "1", "--exclude-fees", "--send", "--yes", "-o", "json")
    assert result.code == 0, result.stderr
    assert usdc_position(chain) < before


def test_send_off_a_terminal_needs_yes_and_fails_fast(chain, sandbox):
    sandbox.add_fault("*", ".*", 500, b'{"message":"should not be called"}', times=None)
    result = chain("deposit", "--asset", "USDC", "--amount", "10", "--send")
    assert result.code == 2 and "--yes" in result.stderr


@pytest.mark.parametrize(
    "amount, extra, named",
    [
        ("-1", [], "-1"),
        ("0", [], "'0'"),
        ("abc", [], "abc"),
        ("1e6", [], "1e6"),
        ("1.0000001", [], "1.0000001"),
        ("18446744073709551616", ["--raw"], "18446744073709551616"),
        ("1.5", ["--raw"], "1.5"),
    ],
)
def test_bad_amounts_are_refused_before_any_request(chain, sandbox, amount, extra, named):
    sandbox.add_fault("*", ".*", 500, b'{"message":"should not be called"}', times=None)
    result = chain("deposit", "--asset", "USDC", "--amount", amount, *extra)
    assert result.code == 2, result.stderr
    assert named in result.stderr


def test_amount_and_all_exclude_each_other_and_one_is_required(chain):
    assert chain("deposit", "--asset", "USDC", "--amount", "1", "--all").code == 2
    assert chain("deposit", "--asset", "USDC").code == 2


def test_unknown_mint_needs_raw_only_where_nothing_can_tell_its_decimals(chain):
    mint = str(Keypair().pubkey())
    # The RPC answers: there is no mint at that address (the decimals of a real one are read from it).
    result = chain("deposit", "--asset", mint, "--amount", "1")
    assert result.code == 2 and "is not a token mint on the RPC" in result.stderr
    # No RPC answers and the service does not know it: only base units can be meant.
    unreachable = chain("deposit", "--asset", mint, "--amount", "1", "-u", "http://127.0.0.1:9")
    assert unreachable.code == 2 and "--raw" in unreachable.stderr


def test_the_services_word_never_sets_a_mints_decimals(chain):
    # The sandbox's WIF is no known token, and the service lists its decimals in the
    # wallet's balances: with the RPC unreachable they are still not taken from there (a service that
    # said 9 would turn "1" into a thousand), so token units are refused and base units still go.
    mint = "EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm"  # (PYUSD, this test's mint before, is a known token now)

    balances = chain("balances", "--all", "-o", "json").json()
    assert any(b["token_address"] == mint and b["decimals"] == 6 for b in balances["data"])
    review = ("deposit", "--asset", mint, "-u", "http://127.0.0.1:9")
    refused = chain(*review, "--amount", "1")
    assert refused.code == 2 and "--raw" in refused.stderr, refused.stderr


def test_failed_on_chain_is_exit_7_with_the_error(chain, sandbox):
    sandbox.runtime.set_fault("fail", count=1)
    result = chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes")
    assert result.code == 7
    assert "failed on chain" in result.stderr.strip().splitlines()[-1]


def test_expired_is_exit_9_and_says_nothing_was_spent(chain, sandbox):
    before = usdc_position(chain)
    sandbox.runtime.set_fault("expire", count=1)
    result = chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes")
    assert result.code == 9, result.stderr
    assert "nothing was spent" in result.stderr
    assert usdc_position(chain) == before


def test_pending_is_exit_8_and_blocks_a_second_deposit_until_its_fate_is_known(chain, sandbox):
    before = usdc_position(chain)
    sandbox.runtime.set_fault("pending", count=1)
    pending = chain(
        "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "--confirm-timeout", "1", "-o", "json"
    )
    assert pending.code == 8, pending.stderr
    signature = pending.json()["signature"]
    assert f"yield tx status {signature}" in pending.stderr
    # never a second deposit while the first could still land
    again = chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes")
    assert again.code == 8 and signature in again.stderr
    assert chain("tx", "status", signature).code == 8
    sandbox.runtime.set_fault("release")
    status = chain("tx", "status", signature, "-o", "json")
    assert status.code == 0 and status.json()["status"] in ("confirmed", "finalized")
    assert usdc_position(chain) == before + 1_000_000
    assert chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes").code == 0


def test_no_wait_prints_the_signature_at_once(chain):
    result = chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "--no-wait", "-o", "json")
    assert result.code == 0 and result.json()["status"] == "sent"
    assert chain("tx", "status", result.json()["signature"]).code == 0


def test_a_slow_rpc_ends_pending_not_in_a_traceback(chain, sandbox):
    sandbox.runtime.set_fault("slow", seconds=0.4, methods=["getSignatureStatuses"])
    result = chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "--confirm-timeout", "0.5")
    assert result.code in (0, 8), result.stderr


def test_payer_who_is_not_the_user_signs_in_two_steps(chain, sandbox, tmp_path):
    payer = Keypair()
    sandbox.runtime.airdrop(payer.pubkey(), 2_000_000_000)
    payer_file = write_keypair(tmp_path / "payer.json", payer)
    before = usdc_position(chain)
    # the user signs their slot; the payer's is still missing
    first = chain("deposit", "--asset", "USDC", "--amount", "3", "--payer", str(payer.pubkey()), "--sign", "-o", "json")
    assert first.code == 0, first.stderr
    body = first.json()
    assert body["status"] == "partially-signed" and body["missing_signers"] == [str(payer.pubkey())]
    partly = tmp_path / "partly.json"
    partly.write_text(first.stdout)
    # the payer, on "another machine", signs and sends it
    # the user's slot is already signed: the payer names that signer, or nothing is signed
    unnamed = chain("tx", "sign", str(partly), "-k", payer_file, "-o", "json")
    assert unnamed.code == 10 and "a key nobody named" in unnamed.stderr, unnamed.stderr
    second = chain("tx", "sign", str(partly), "-k", payer_file, "--wallet", DEMO_WALLET, "-o", "json")
    assert second.code == 0, second.stderr
    assert second.json()["missing_signers"] == [] and signed_ok(second.json()["transaction"])
    full = tmp_path / "full.json"
    full.write_text(second.stdout)
    sent = chain("tx", "send", str(full), "-k", payer_file, "--yes", "-o", "json")
    assert sent.code == 0, sent.stderr
    assert usdc_position(chain) == before + 3_000_000


def test_guard_refuses_a_foreign_fee_payer_and_unnamed_signers(chain, tmp_path):
    stranger = Keypair()
    built = chain("deposit", "--asset", "USDC", "--amount", "1", "--payer", str(stranger.pubkey()), "-o", "json")
    assert built.code == 11, built.stderr  # reviewed: the stranger has no SOL to pay with, so the simulation fails
    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(built.stdout)
    # the demo keypair would sign a transaction paid by a stranger: refused, nothing signed
    result = chain("tx", "sign", str(unsigned), "-o", "json")
    assert result.code == 10 and "fee payer" in result.stderr
    # naming the payer is not enough for --send: its signature is missing
    result = chain("tx", "send", str(unsigned), "--payer", str(stranger.pubkey()), "--yes")
    assert result.code == 2


def test_tx_inspect_reads_stdin_and_refuses_garbage(chain):
    built = chain("deposit", "--asset", "USDC", "--amount", "1", "-o", "json").json()
    inspected = chain("tx", "inspect", "-", "-o", "json", input=built["transaction"])
    assert inspected.code == 0 and inspected.json()["review"]["fee_payer"] == DEMO_WALLET
    garbage = chain("tx", "inspect", "-", input="bm90IGEgdHJhbnNhY3Rpb24=")
    assert garbage.code == 2 and garbage.stderr.startswith("error:")


def test_signed_transactions_verify_in_web3js(chain):
    node = node_with("@solana/web3.js")
    signed = chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-o", "json").json()["transaction"]
    unsigned = chain("deposit", "--asset", "USDC", "--amount", "1", "-o", "json").json()["transaction"]
    out = subprocess.run(
        [node, str(JS_DIR / "verify.mjs")],
        input=f"{signed}\n{unsigned}\n",
        capture_output=True,
        text=True,
        cwd=JS_DIR,
        check=True,
        timeout=60,
    )
    first, second = (json.loads(line) for line in out.stdout.splitlines())
    assert first["ok"] is True and first["feePayer"] == DEMO_WALLET and first["version"] == 0
    assert second["ok"] is False and second["signers"][0]["signed"] is False


def test_the_embedded_sandbox_deposit_and_withdraw_across_invocations(run):
    before = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"][0]["total_position_value"]
    deposit = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes", "-o", "json")
    assert deposit.code == 0, deposit.stderr
    assert deposit.json()["signature"]
    after = run("--sandbox", "positions", "-o", "json").json()["data"]
    assert [p for p in after if p["token_symbol"] == "USDC"][0]["total_position_value"] == before + 10_000_000
    withdraw = run("--sandbox", "withdraw", "--asset", "USDC", "--all", "--send", "--yes")
    assert withdraw.code == 0, withdraw.stderr
