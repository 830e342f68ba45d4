"""Messages that say what to do, through the `yield` command against the served sandbox."""

import json

from solders.keypair import Keypair

from tests.conftest import usdc_position, write_keypair
from yieldcli.sandbox.demo import DEMO_WALLET


def test_tx_sign_without_expect_says_to_state_the_intent(chain, tmp_path):
    built = tmp_path / "deposit.json"
    built.write_text(chain("deposit", "--asset", "USDC", "--amount", "10", "-o", "json").stdout)
    refused = chain("tx", "sign", str(built))
    assert refused.code == 10, refused.stderr
    assert "--expect deposit:USDC:10" in refused.stderr and "no intent was stated" in refused.stderr
    assert "compromised" not in refused.stderr
    assert chain("tx", "sign", str(built), "--expect", "deposit:USDC:10").code == 0


def test_a_partly_signed_transaction_has_no_signature_until_the_fee_payer_signs(chain, sandbox, tmp_path):
    payer = Keypair()
    sandbox.runtime.airdrop(payer.pubkey(), 2_000_000_000)
    built = chain("deposit", "--asset", "USDC", "--amount", "1", "--payer", str(payer.pubkey()), "-o", "json")
    partly = chain(
        "deposit", "--asset", "USDC", "--amount", "1", "--payer", str(payer.pubkey()), "--sign", "-o", "json"
    )
    assert built.code == 0 and partly.code == 0, partly.stderr
    assert partly.json()["status"] == "partially-signed" and partly.json()["signature"] is None
    unsigned = tmp_path / "partly.json"
    unsigned.write_text(partly.stdout)
    payer_file = write_keypair(tmp_path / "payer.json", payer)
    done = chain(
        "tx",
        "sign",
        str(unsigned),
        "-k",
        payer_file,
        "--wallet",
        DEMO_WALLET,
        "--expect",
        "deposit:USDC:1",
        "-o",
        "json",
    )
    assert done.code == 0, done.stderr
    assert done.json()["status"] == "signed" and done.json()["signature"] not in (None, "1" * 64)


def test_tx_status_of_an_unknown_signature_has_a_documented_code_and_kind(chain):
    signed = chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-o", "json").json()["signature"]
    status = chain("tx", "status", signed, "-o", "json")  # signed, never sent
    assert status.code == 8 and status.json()["status"] == "unknown"
    error = json.loads(status.stderr.strip().splitlines()[-1])["error"]
    assert error["kind"] == "tx.unknown" and "--url" in error["hint"]


def test_a_transaction_signed_against_the_sandbox_is_sent_there_without_naming_its_service(
    chain, run, sandbox, tmp_path
):
    before = usdc_position(chain)
    signed = tmp_path / "signed.json"
    signed.write_text(chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-o", "json").stdout)
    # no --api-url: the configured service would be the production one; the transaction says where it belongs
    sent = run(
        "tx",
        "send",
        str(signed),
        "-u",
        sandbox.rpc_url,
        "--expect",
        "deposit:USDC:1",
        "--yes",
        "-o",
        "json",
        env={"YIELD_KEYPAIR": chain.keypair},
    )
    assert sent.code == 0, sent.stderr
    assert sent.json()["status"] == "confirmed" and usdc_position(chain) == before + 1_000_000


def test_strategy_not_found_says_where_the_id_came_from(api, run, sandbox):
    assert api("positions", DEMO_WALLET, "--strategy", "nope").stderr.startswith(
        "error: Strategy not found: 'nope' (from --strategy)"
    )
    assert "(from YIELD_STRATEGY)" in api("positions", DEMO_WALLET, env={"YIELD_STRATEGY": "nope"}).stderr
    assert run("--profile", "p", "config", "set", "strategy", "nope").code == 0
    result = api("--profile", "p", "positions", DEMO_WALLET)
    assert result.code == 2 and "[profiles.p]" in result.stderr and "yield strategy info" in result.stderr


def test_auth_messages_name_the_key_and_where_it_came_from(run, sandbox):
    from tests.conftest import TEST_API_KEY

    wrong = "wrong-key-0123456789abcd"
    from_env = run("--api-url", sandbox.url, "balances", DEMO_WALLET, env={"YIELD_API_KEY": wrong})
    assert from_env.code == 4 and "(the key ****abcd from YIELD_API_KEY)" in from_env.stderr
    assert "unset YIELD_API_KEY" in from_env.stderr and wrong not in from_env.stderr
    assert run("auth", "login", "--with-token", input=wrong).code == 0
    stored = run("--api-url", sandbox.url, "balances", DEMO_WALLET)
    assert stored.code == 4 and "(the key ****abcd from the keyring yield/api-key:default)" in stored.stderr
    verbose = run("--api-url", sandbox.url, "-v", "balances", DEMO_WALLET, env={"YIELD_API_KEY": TEST_API_KEY})
    shown = run("auth", "status", "-o", "json", env={"YIELD_API_KEY": TEST_API_KEY}).json()["key"]
    assert f"x-api-key: {shown}" in verbose.stderr  # one masking everywhere
    # no keyring backend: the hints say to set the variable, not to run the command that cannot work
    none = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    missing = run("--api-url", sandbox.url, "balances", DEMO_WALLET, env=none)
    assert missing.code == 4 and "auth login" not in missing.stderr and "set YIELD_API_KEY" in missing.stderr
    status = run("auth", "status", env=none)
    assert status.code == 3 and "auth login" not in status.stderr and "YIELD_API_KEY" in status.stderr


def _base58(data: bytes) -> str:
    from yieldcli.addresses import b58encode

    return b58encode(data)


def test_keypairs_as_base58_on_one_line_and_on_stdin_with_the_wallet_derived(chain, run, sandbox, tmp_path):
    from yieldcli.sandbox.demo import demo_keypair

    before = usdc_position(chain)
    exported = tmp_path / "exported.txt"  # what wallets export: the secret key in base58
    exported.write_text(_base58(bytes(demo_keypair())) + "\n")
    exported.chmod(0o600)
    env = {"YIELD_KEYPAIR": str(exported)}
    assert chain("positions", "-o", "json", env=env).json()["data"]  # the wallet is the key's
    sent = chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json", env=env)
    assert sent.code == 0, sent.stderr
    # -k -: the keypair on standard input signs, and the wallet comes from it (no --wallet)
    for text in (json.dumps(list(bytes(demo_keypair()))), _base58(bytes(demo_keypair()))):
        piped = chain(
            "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-k", "-", "-o", "json", input=text
        )
        assert piped.code == 0, piped.stderr
    assert usdc_position(chain) == before + 3_000_000
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("0OIl" * 22 + "\n")
    refused = chain("positions", "-k", str(garbage))
    assert refused.code == 3 and "base58 secret key" in refused.stderr and "0OIl" not in refused.stderr
    short = tmp_path / "short.txt"
    short.write_text(_base58(bytes(demo_keypair())[:32]))  # a secret half alone
    assert "of 32 bytes" in chain("positions", "-k", str(short)).stderr


def test_config_set_keypair_checks_the_file_and_signing_with_a_readable_one_warns(chain, run, tmp_path, isolated):
    from yieldcli.sandbox.demo import demo_keypair

    missing = run("config", "set", "keypair", str(tmp_path / "nope.json"))
    assert missing.code == 2 and "nope.json" in missing.stderr
    notakey = tmp_path / "notes.json"
    notakey.write_text("[1, 2, 3]")
    assert run("config", "set", "keypair", str(notakey)).code == 2
    config = isolated / ".config" / "yield" / "config.toml"
    assert not config.exists() or "keypair" not in config.read_text()  # nothing written
    good = write_keypair(tmp_path / "good.json", demo_keypair())
    assert run("config", "set", "keypair", good).code == 0 and "keypair" in config.read_text()
    (tmp_path / "good.json").chmod(0o644)
    signed = chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-k", good, "-o", "json")
    assert signed.code == 0 and "accessible by other users" in signed.stderr and "chmod 600" in signed.stderr
