"""Signing with a Ledger, shown through `yield` against the sandbox, the real Solana app in Speculos
playing the device and the test playing the person at its buttons."""

from __future__ import annotations

import base64
import time

import pytest
from solders.keypair import Keypair
from solders.transaction import VersionedTransaction

from tests.chain.keys.ledger.conftest import KEY_0, KEY_0_0, KEY_44_501, LEDGER_URL, rpc_call

HASH_LINE = "compare it with your Ledger"


def message_hash_printed(stderr: str) -> str:
    line = next(line for line in stderr.splitlines() if HASH_LINE in line)
    return line.split("message hash ", 1)[1].split(":", 1)[0]


def shown(texts: list[str]) -> str:
    """The device's screens as one string: a long value is drawn over several lines."""
    return "".join(texts).replace(" ", "")


def test_public_keys_at_each_url_form(ledger, isolated):
    for flags, expected in (([], KEY_44_501), (["--key", "0"], KEY_0), (["--key", "0/0"], KEY_0_0)):
        result = ledger.yield_("ledger", "address", *flags, "-o", "json", env={"YIELD_KEYPAIR": ""})
        assert result.code == 0, result.stderr
        assert result.json()["address"] == expected
    for url, expected in (
        ("usb://ledger", KEY_44_501),
        ("usb://ledger?key=0", KEY_0),
        ("usb://ledger?key=0/0", KEY_0_0),
        (f"usb://ledger/{KEY_44_501}?key=0/0", KEY_0_0),
    ):
        # as -k, and as YIELD_KEYPAIR: the wallet a read defaults to is the Ledger's key
        assert ledger.yield_("ledger", "address", "-k", url, "-o", "json").json()["address"] == expected
        body = ledger.yield_("balances", "--asset", "USDC", "-o", "json", env={"YIELD_KEYPAIR": url})
        assert body.code == 0, body.stderr
        held = sum(int(row["total_balance"]) for row in body.json()["data"])
        assert held == (100_000_000 if expected == KEY_0_0 else 0), body.stdout  # only key 0/0 was given USDC
    # the Solana CLI config's keypair_path, then the profile's keypair: doctor names the address
    solana = isolated / ".config" / "solana" / "cli"
    solana.mkdir(parents=True)
    (solana / "config.yml").write_text('---\njson_rpc_url: "http://127.0.0.1:1"\nkeypair_path: usb://ledger?key=0\n')
    doctor = ledger.yield_("doctor", "-o", "json", env={"YIELD_KEYPAIR": ""})
    check = next(c for c in doctor.json()["checks"] if c["name"] == "keypair")
    assert KEY_0 in check["detail"] and "Solana app 1.9.0" in check["detail"] and "blind signing off" in check["detail"]
    assert check["status"] == "warn" and "Settings > Allow blind sign > Yes" in check["hint"]
    assert ledger.yield_("config", "set", "keypair", "usb://ledger?key=0/0").code == 0
    doctor = ledger.yield_("doctor", "-o", "json", env={"YIELD_KEYPAIR": ""})
    check = next(c for c in doctor.json()["checks"] if c["name"] == "keypair")
    assert KEY_0_0 in check["detail"], check
    # a wallet id that is not this device's: one line, exit 3
    other = str(Keypair().pubkey())
    wrong = ledger.yield_("ledger", "address", "-k", f"usb://ledger/{other}?key=0")
    assert wrong.code == 3 and "no Ledger found" in wrong.stderr and len(wrong.error_lines()) == 1


def test_address_confirmed_on_the_device(ledger):
    result, texts, _, _ = ledger.with_person("Approve", "ledger", "address", "--key", "0/0", "--confirm", "-o", "json")
    assert result.code == 0, result.stderr
    assert result.json()["address"] == KEY_0_0 and KEY_0_0 in shown(texts), texts
    result, texts, _, _ = ledger.with_person("Reject", "ledger", "address", "--key", "0/0", "--confirm")
    assert result.code == 12 and "rejected on the Ledger" in result.stderr


def test_deposit_send_with_the_ledger_confirms_and_the_device_shows_the_hash_yield_printed(ledger):
    ledger.device.enable_blind_signing()
    before = ledger.usdc_position()
    result, texts, _, _ = ledger.with_person(
        "Approve", "deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes", "-o", "json"
    )
    assert result.code == 0, result.stderr
    body = result.json()
    assert body["status"] == "confirmed" and body["slot"] > 0
    printed = message_hash_printed(result.stderr)
    assert body["message_hash"] == printed
    # what the device showed: a blind signature, and the very hash yield printed before it was asked
    assert "Unrecognized format" in " ".join(texts) and "Message Hash" in " ".join(texts), texts
    assert printed in shown(texts), texts
    assert ledger.usdc_position() == before + 10_000_000
    tx = VersionedTransaction.from_bytes(base64.b64decode(body["transaction"]))
    assert str(tx.message.account_keys[0]) == KEY_0_0 and all(tx.verify_with_results())


def test_blind_signing_off_is_refused_before_anything_is_sent_to_sign(ledger):
    before = ledger.usdc_position()
    ledger.device.clear()
    result = ledger.yield_("deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes")
    assert result.code == 3, result.stderr
    lines = result.error_lines()
    assert (
        lines[-1].startswith("error: blind signing is off")
        and "Solana app > Settings > Allow blind sign > Yes" in lines[-1]
    )
    time.sleep(0.5)
    assert ledger.device.texts() == []  # nothing was shown: the sign request was never sent
    assert ledger.usdc_position() == before


def test_rejected_on_the_device_is_exit_12_and_nothing_is_sent(ledger):
    ledger.device.enable_blind_signing()
    before = ledger.usdc_position()
    result, texts, _, _ = ledger.with_person(
        "Reject", "deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes"
    )
    assert result.code == 12, result.stderr
    assert "error: declined on the Ledger; nothing was signed" in result.stderr
    assert "Message Hash" in " ".join(texts)
    assert ledger.usdc_position() == before
    assert "sent" not in result.stderr.replace("nothing was", "")


def test_the_ledger_signs_as_the_payer_in_tx_sign(ledger, tmp_path):
    from tests.conftest import write_keypair
    from yieldcli.sandbox.demo import DEMO_WALLET, demo_keypair

    ledger.device.enable_blind_signing()
    user = write_keypair(tmp_path / "user.json", demo_keypair())
    user_env = {"YIELD_KEYPAIR": user}
    before = ledger.yield_("positions", DEMO_WALLET, "--asset", "USDC", "-o", "json").json()["data"][0][
        "total_position_value"
    ]
    first = ledger.yield_(
        "deposit", "--asset", "USDC", "--amount", "3", "--payer", KEY_0_0, "--sign", "-o", "json", env=user_env
    )
    assert first.code == 0, first.stderr
    assert first.json()["missing_signers"] == [KEY_0_0]
    partly = tmp_path / "partly.json"
    partly.write_text(first.stdout)
    # the payer's machine: its Ledger signs the fee payer's slot, after yield's review
    second, texts, _, _ = ledger.with_person(
        "Approve", "tx", "sign", str(partly), "-k", LEDGER_URL, "--wallet", DEMO_WALLET, "-o", "json"
    )
    assert second.code == 0, second.stderr
    assert second.json()["missing_signers"] == [] and message_hash_printed(second.stderr) in shown(texts)
    full = tmp_path / "full.json"
    full.write_text(second.stdout)
    sent = ledger.yield_(
        "tx", "send", str(full), "--payer", KEY_0_0, "--expect", "deposit:USDC:3", "--yes", "-o", "json", env=user_env
    )
    assert sent.code == 0, sent.stderr
    after = ledger.yield_("positions", DEMO_WALLET, "--asset", "USDC", "-o", "json").json()["data"][0][
        "total_position_value"
    ]
    assert after == before + 3_000_000


def test_a_durable_nonce_transaction_with_the_ledger_as_nonce_authority(ledger, tmp_path):
    from tests.conftest import write_keypair

    ledger.device.enable_blind_signing()
    payer = Keypair()
    rpc_call(ledger.sandbox.rpc_url, "requestAirdrop", [str(payer.pubkey()), 2_000_000_000])
    payer_file = write_keypair(tmp_path / "payer.json", payer)
    created = ledger.yield_("nonce", "create", "--authority", KEY_0_0, "-k", payer_file, "--yes", "-o", "json")
    assert created.code == 0, created.stderr
    nonce = created.json()["address"]
    before = ledger.usdc_position()
    # the user (the Ledger's key) deposits on the nonce; the Ledger signs as user and nonce authority
    result, texts, _, _ = ledger.with_person(
        "Approve",
        "deposit",
        "--asset",
        "USDC",
        "--amount",
        "2",
        "--ix",
        "--nonce",
        nonce,
        "--nonce-authority",
        LEDGER_URL,
        "--send",
        "--yes",
        "-o",
        "json",
    )
    assert result.code == 0, result.stderr
    body = result.json()
    assert body["status"] == "confirmed"
    assert any(
        i["program"].lower().startswith("system") and "nonce" in str(i).lower() for i in body["review"]["instructions"]
    )
    assert message_hash_printed(result.stderr) in shown(texts)
    assert ledger.usdc_position() == before + 2_000_000
    moved = ledger.yield_("nonce", "show", nonce, "-o", "json").json()
    assert moved["nonce"] != created.json()["nonce"]


def test_the_intent_guard_refuses_a_doctored_transaction_before_the_device_is_asked(sandbox, run, device):
    from solders.pubkey import Pubkey
    from solders.system_program import TransferParams, transfer

    from tests.chain.keys.ledger.conftest import LedgerWorld
    from tests.cli.stand_in import StandIn, decompile, recompile

    stand_in = StandIn(sandbox.url)
    try:
        world = LedgerWorld(sandbox, run, device, api_url=stand_in.url)
        table = sandbox.chain.lookup_table.key
        tables = {table: sandbox.runtime.lookup_table_addresses(table)}
        stranger = Keypair().pubkey()
        # the service adds a transfer of 1 SOL from the user to a stranger
        theft = transfer(TransferParams(from_pubkey=Pubkey.from_string(KEY_0_0), to_pubkey=stranger, lamports=10**9))
        stand_in.doctor = lambda tx: recompile(tx, decompile(tx, tables) + [theft], tables)
        device.enable_blind_signing()
        before = world.usdc_position()
        device.clear()
        result = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes")
        assert result.code == 10, result.stderr
        assert "does not do what was asked" in result.stderr and HASH_LINE not in result.stderr
        time.sleep(0.5)
        assert device.texts() == []  # the device's screen never showed anything to sign
        assert world.usdc_position() == before
        assert rpc_call(sandbox.rpc_url, "getBalance", [str(stranger), {"commitment": "confirmed"}])["value"] == 0
    finally:
        stand_in.stop()


def test_the_library_takes_a_ledger_url_or_signer_where_a_keypair_goes(ledger, monkeypatch):
    import threading
    from decimal import Decimal

    from tests.conftest import TEST_API_KEY
    from yieldcli import Client, Confirmed
    from yieldcli.chain.keys.ledger.errors import LedgerError
    from yieldcli.chain.keys.ledger.signer import LedgerSigner
    from yieldcli.sandbox.demo import DEMO_STRATEGY_ID

    sandbox, device = ledger.sandbox, ledger.device
    settings = dict(api_url=sandbox.url, api_key=TEST_API_KEY, strategy=DEMO_STRATEGY_ID, rpc_url=sandbox.rpc_url)
    # an object: blind signing off is a typed error, raised before the device is asked to sign
    with Client(**settings, keypair=LedgerSigner(LEDGER_URL, apdu=device.apdu)) as client:
        deposit = client.deposit("USDC", Decimal("1"))
        assert deposit.effect.ok and str(deposit.transaction.message.account_keys[0]) == KEY_0_0
        device.clear()
        with pytest.raises(LedgerError) as caught:
            deposit.send(confirm=lambda text, review: True)
        assert caught.value.kind == "ledger.blind_signing_disabled" and device.texts() == []
    # the URL string, the emulator named by YIELD_LEDGER_APDU as the command line has it
    device.enable_blind_signing()
    monkeypatch.setenv("YIELD_LEDGER_APDU", device.apdu)
    with Client(**settings, keypair=LEDGER_URL) as client:
        deposit = client.deposit("USDC", Decimal("1"))
        assert deposit.message_hash is not None and len(deposit.message_hash) in (43, 44)
        device.clear()
        seen = {}
        person = threading.Thread(target=lambda: seen.update(texts=device.answer("Approve")), daemon=True)
        person.start()
        outcome = deposit.send(confirm=lambda text, review: review.effect.ok)
        person.join(30)
    assert isinstance(outcome, Confirmed), outcome
    assert outcome.result["message_hash"] == deposit.message_hash and deposit.message_hash in shown(seen["texts"])


def test_no_device_is_one_line_and_exit_3(run):
    from tests.ledger.emulator import free_port

    closed = f"127.0.0.1:{free_port()}"
    result = run("ledger", "address", "--key", "0", "-o", "json", env={"YIELD_LEDGER_APDU": closed})
    assert result.code == 3
    lines = result.error_lines()
    assert len(lines) == 1 and lines[0].startswith(f"error: no Ledger found: nothing answers at {closed}")
    assert "open the Solana app" in lines[0]
    # over USB: without hidapi installed, or with no device connected, one line as well
    result = run("ledger", "address", "-k", "usb://ledger?key=0")
    assert result.code == 3 and len(result.error_lines()) == 1
    assert "needs the hidapi package" in result.stderr or "no Ledger found" in result.stderr
    # a keypair URL that is not one
    result = run("ledger", "address", "-k", "usb://ledger?key=1/2/3")
    assert result.code == 2 and "at most two levels" in result.stderr


def test_no_answer_on_the_device_times_out_with_nothing_signed(ledger):
    ledger.device.enable_blind_signing()
    before = ledger.usdc_position()
    ledger.device.clear()
    result = ledger.yield_(
        "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", env={"YIELD_LEDGER_TIMEOUT": "3"}
    )
    assert result.code == 3, result.stderr
    lines = result.error_lines()
    assert lines[-1].startswith("error: the Ledger did not answer within 3 seconds; nothing was signed")
    assert "Unrecognized format" in " ".join(ledger.device.texts())  # the request was on the screen, unanswered
    assert ledger.usdc_position() == before


def test_on_a_terminal_the_hash_stands_just_above_our_prompt_then_the_device_asks(ledger):
    from tests.cli.test_prompts import Terminal

    ledger.device.enable_blind_signing()
    before = ledger.usdc_position()
    ledger.device.clear()
    term = Terminal("deposit", "--asset", "USDC", "--amount", "1", "--send", env=ledger.env())
    term.expect("[y/N]")
    lines = [line for line in term.screen.decode(errors="replace").replace("\r", "").split("\n") if line.strip()]
    assert "[y/N]" in lines[-1] and HASH_LINE in lines[-2], lines[-3:]
    printed = message_hash_printed(lines[-2])
    assert sum(printed in line for line in lines) == 2  # in the review, and above the prompt
    assert ledger.device.texts() == []  # nothing asked of the device before our yes
    term.type("y\n")
    texts = ledger.device.answer("Approve")
    assert term.wait() == 0, term.screen[-2000:]
    assert printed in shown(texts)
    assert ledger.usdc_position() == before + 1_000_000


def test_a_clear_signed_transaction_needs_no_blind_signing(ledger):
    """`nonce create` paid by the Ledger: System instructions, which the app shows itself, blind signing off."""
    result, texts, _, _ = ledger.with_person(
        "Approve", "nonce", "create", "--authority", KEY_0_0, "-k", LEDGER_URL, "--yes", "-o", "json"
    )
    assert result.code == 0, result.stderr
    assert "Unrecognized format" not in " ".join(texts) and "Create nonce acct" in texts and KEY_0_0 in shown(texts), (
        texts
    )
    shown_nonce = ledger.yield_("nonce", "show", result.json()["address"], "-o", "json").json()
    assert shown_nonce["authority"] == KEY_0_0
