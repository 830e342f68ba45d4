"""A busy mainnet, as the sandbox's network knobs make it, through the `yield` command over loopback:
priority fees that decide whether a transaction lands, sends that are dropped and rebroadcast, a fee
cap that refuses before signing, and a durable-nonce transaction signed on two machines long after
its blockhash would have expired."""

from __future__ import annotations

import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from tests.cli.commands.test_nonce_cmd_sandbox import rpc_call
from tests.conftest import TEST_API_KEY, serve_sandbox, write_keypair
from yieldcli.amounts import format_units
from yieldcli.chain.fees.compute_budget import AUTO_PERCENTILE
from yieldcli.sandbox.chain.knobs import Network
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET, demo_keypair
from yieldcli.sandbox.runtime import BLOCKHASH_WINDOW

MIN_PRICE = 5_000  # micro-lamports per compute unit the busy sandbox requires to include a transaction


@pytest.fixture
def busy(tmp_path, run):
    """Start a served sandbox with the given network knobs; returns `yield` pointed at it (as the demo wallet)."""
    servers = []
    keypair = write_keypair(tmp_path / "demo.json", demo_keypair())

    def start(**knobs):
        server = serve_sandbox(tmp_path / f"busy-{len(servers)}", network=Network(**knobs))
        servers.append(server)

        def _yield(*args, env=None, **kwargs):
            full_env = {
                "YIELD_API_URL": server.url,
                "YIELD_API_KEY": TEST_API_KEY,
                "YIELD_RPC_URL": server.rpc_url,
                "YIELD_KEYPAIR": keypair,
                "YIELD_STRATEGY": DEMO_STRATEGY_ID,
                **(env or {}),
            }
            return run(*args, env=full_env, **kwargs)

        _yield.server = server
        _yield.keypair = keypair
        return _yield

    yield start
    for server in servers:
        server.stop()


def wallet_state(cli) -> tuple[int, int]:
    """(SOL lamports of the demo wallet, its USDC position in base units), as the chain and the service see them."""
    lamports = cli.server.runtime.get_balance(Pubkey.from_string(DEMO_WALLET))
    body = cli("positions", "--asset", "USDC", "-o", "json").json()
    return lamports, sum(p["total_position_value"] for p in body["data"])


def test_without_a_priority_fee_it_expires_and_with_auto_it_lands(busy):
    # Mainnet's slots and window: the blockhash outlives any delay between the service building the
    # transaction and the send, however loaded the machine. The busy sandbox passes over an underpriced
    # transaction until its blockhash is gone, at once (it did so on a wall clock of half a second,
    # which a loaded machine could spend before the send: the blockhash was unknown, not expired).
    cli = busy(min_priority_fee=MIN_PRICE)
    before = wallet_state(cli)

    plain = cli("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")
    assert plain.code == 9, plain.stderr
    assert "expired" in plain.stderr and "nothing was spent" in plain.stderr
    assert plain.json()["fee"]["priority"] == 0
    assert wallet_state(cli) == before  # not a lamport, not a token

    auto = cli(
        "-v", "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "--priority-fee", "auto", "-o", "json"
    )
    assert auto.code == 0, auto.stderr
    body = auto.json()
    fee = body["fee"]
    # The sandbox reports MIN_PRICE for every recent slot; its p75 is what auto pays.
    assert AUTO_PERCENTILE == 75 and fee["compute_unit_price"] == MIN_PRICE
    units = body["simulation"]["units_consumed"]
    assert units < fee["compute_unit_limit"] <= units + units // 10 + 1_001  # the simulation's units plus the margin
    assert fee["priority"] == -(-fee["compute_unit_limit"] * MIN_PRICE // 1_000_000)
    assert fee["total"] == fee["base"] + fee["priority"] and fee["base"] == 5_000
    # The effect the guard checked, and what the review prints, count the priority fee.
    assert body["effect"]["observed"]["fee"] == fee["total"]
    # In SOL, trailing zeros dropped (70 lamports: 0.00000007), as every amount the summary writes.
    assert f"(priority {format_units(fee['priority'], 9, min_fraction=0)})" in body["effect"]["summary"]
    assert "compute units:" in auto.stderr and f"price {MIN_PRICE} micro-lamports" in auto.stderr
    lamports, position = wallet_state(cli)
    assert position == before[1] + 1_000_000
    assert before[0] - lamports == -body["effect"]["observed"]["sol"]  # one fee, as simulated: landed once


def test_dropped_sends_are_rebroadcast_and_land_once(busy):
    cli = busy(drop_sends=2)
    before = wallet_state(cli)
    result = cli("-v", "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")
    assert result.code == 0, result.stderr
    body = result.json()
    assert body["status"] == "confirmed" and body["sends"] == 3  # two dropped, the third landed
    assert "[yield] sent 3 time(s)" in result.stderr
    lamports, position = wallet_state(cli)
    # Exactly one copy landed: the position grew by the amount once and one fee was paid once.
    assert position == before[1] + 1_000_000
    assert before[0] - lamports == -body["effect"]["observed"]["sol"]
    status = cli("tx", "status", body["signature"], "-o", "json")
    assert status.code == 0 and status.json()["status"] in ("confirmed", "finalized")


def test_max_fee_below_the_needed_fee_refuses_before_signing(busy, tmp_path):
    cli = busy(min_priority_fee=MIN_PRICE)
    before = wallet_state(cli)
    result = cli(
        "deposit",
        "--asset",
        "USDC",
        "--amount",
        "1",
        "--send",
        "--yes",
        "--priority-fee",
        "auto",
        "--max-fee",
        "5001",
        "-o",
        "json",
    )
    assert result.code == 10, result.stderr
    assert "more than the maximum of 5001; nothing was signed" in result.stderr
    assert wallet_state(cli) == before
    # The profile's cap and priority fee are the defaults; a flag beats them.
    config = tmp_path / "config.toml"
    config.write_text('[profiles.default]\npriority_fee = "auto"\nmax_fee = 5001\n')
    from_profile = cli(
        "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", env={"YIELD_CONFIG": str(config)}
    )
    assert from_profile.code == 10 and "maximum of 5001" in from_profile.stderr
    from_env = cli(
        "deposit",
        "--asset",
        "USDC",
        "--amount",
        "1",
        "--send",
        "--yes",
        env={"YIELD_CONFIG": str(config), "YIELD_MAX_FEE": "1000000"},
        timeout=60,
    )
    assert from_env.code == 0, from_env.stderr
    bad = cli("deposit", "--asset", "USDC", "--amount", "1", "--priority-fee", "fast")
    assert bad.code == 2 and "invalid priority fee 'fast'" in bad.stderr
    bad_env = cli("deposit", "--asset", "USDC", "--amount", "1", env={"YIELD_PRIORITY_FEE": "-1"})
    assert bad_env.code == 3 and "YIELD_PRIORITY_FEE" in bad_env.stderr


def test_a_nonce_deposit_signed_on_two_machines_lands_long_after_its_blockhash(busy, tmp_path):
    cli = busy()
    runtime = cli.server.runtime
    payer = Keypair()  # the second machine: pays the fee and sends
    runtime.airdrop(payer.pubkey(), 2_000_000_000)
    payer_file = write_keypair(tmp_path / "payer.json", payer)
    created = cli("nonce", "create", "--authority", DEMO_WALLET, "-k", payer_file, "--yes", "-o", "json")
    assert created.code == 0, created.stderr
    nonce = created.json()
    before = wallet_state(cli)

    # First machine: the user builds the deposit on the nonce and signs their slot (also the nonce's authority).
    first = cli(
        "deposit",
        "--asset",
        "USDC",
        "--amount",
        "2",
        "--ix",
        "--nonce",
        nonce["address"],
        "--payer",
        str(payer.pubkey()),
        "--sign",
        "-o",
        "json",
    )
    assert first.code == 0, first.stderr
    body = first.json()
    assert body["status"] == "partially-signed" and body["missing_signers"] == [str(payer.pubkey())]
    instructions = body["review"]["instructions"]
    assert "advance" in str(instructions[0]).lower()  # advance-nonce first, reviewed like the rest
    assert body["effect"]["differences"] == []
    partly = tmp_path / "partly.json"
    partly.write_text(first.stdout)

    # Much longer than a blockhash lives.
    rpc_call(cli.server.rpc_url, "sandbox_advanceSlots", [BLOCKHASH_WINDOW + 50])
    rpc_call(cli.server.rpc_url, "sandbox_expireBlockhash")

    # A priority fee cannot be added any more: recompiling would void the user's signature.
    refused = cli("tx", "sign", str(partly), "-k", payer_file, "--priority-fee", "1000")
    assert refused.code == 2 and "already carries a signature" in refused.stderr

    # A default priority fee (environment or profile) is left out of a transaction already signed.
    # The payer names the user, whose slot is already signed, and the nonce the transaction is built on.
    named = ("--wallet", DEMO_WALLET, "--nonce", nonce["address"])
    unnamed = cli("tx", "sign", str(partly), "-k", payer_file, "-o", "json")
    assert unnamed.code == 10 and "a key nobody named" in unnamed.stderr
    second = cli(
        "-v", "tx", "sign", str(partly), "-k", payer_file, *named, "-o", "json", env={"YIELD_PRIORITY_FEE": "auto"}
    )
    assert second.code == 0, second.stderr
    assert "priority fee from env not applied: the transaction already carries signatures" in second.stderr
    assert second.json()["fee"]["priority"] == 0
    assert second.json()["missing_signers"] == []
    full = tmp_path / "full.json"
    full.write_text(second.stdout)
    sent = cli("-v", "tx", "send", str(full), "-k", payer_file, "--yes", "-o", "json")
    assert sent.code == 0, sent.stderr
    assert sent.json()["status"] == "confirmed"
    assert wallet_state(cli)[1] == before[1] + 2_000_000
    after = cli("nonce", "show", nonce["address"], "-o", "json").json()
    assert after["nonce"] != nonce["nonce"]  # landing used the nonce: these signatures can never land again
    again = cli("tx", "send", str(full), "-k", payer_file, "--yes", "-o", "json")
    assert again.code == 0 and again.json()["already_processed"] is True  # reported, not sent twice
    # The copy signed by the user alone is built on the nonce's old value: refused before signing.
    stale = cli("tx", "sign", str(partly), "-k", payer_file, *named)
    assert stale.code == 9 and "no longer the value of nonce account" in stale.stderr


def test_a_nonce_transaction_that_cannot_land_ends_when_its_nonce_moves_on(busy, tmp_path):
    from solders.hash import Hash

    from yieldcli.chain.keys.sign import sign_transaction
    from yieldcli.chain.tx.nonce import NonceAccount, build_on_nonce

    cli = busy()
    runtime = cli.server.runtime
    user = demo_keypair()
    created = cli("nonce", "create", "--authority", DEMO_WALLET, "-k", cli.keypair, "--yes", "-o", "json").json()
    built = cli(
        "deposit", "--asset", "USDC", "--amount", "1", "--ix", "--nonce", created["address"], "--sign", "-o", "json"
    )
    assert built.code == 0, built.stderr
    signed = tmp_path / "signed.json"
    signed.write_text(built.stdout)
    runtime.set_fault("pending", count=1)  # the cluster holds it: it neither lands nor is forgotten
    sent = cli(
        "tx",
        "send",
        str(signed),
        "--expect",
        "deposit:USDC:1",
        "--nonce",
        created["address"],
        "--yes",
        "--confirm-timeout",
        "1",
        "-o",
        "json",
    )
    assert sent.code == 8, sent.stderr
    signature = sent.json()["signature"]
    # No block height ends it: however many slots pass, it may still land.
    rpc_call(cli.server.rpc_url, "sandbox_advanceSlots", [BLOCKHASH_WINDOW + 50])
    assert cli("tx", "status", signature).code == 8
    blocked = cli("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes")
    assert blocked.code == 8 and signature in blocked.stderr
    # The authority uses the nonce for something else: the held transaction can never land now.
    nonce = NonceAccount(
        Pubkey.from_string(created["address"]), user.pubkey(), Hash.from_string(created["nonce"]), 5000, 0
    )
    other = sign_transaction(build_on_nonce([], user.pubkey(), nonce), [user]).transaction
    assert runtime.send_transaction(other).landed
    status = cli("tx", "status", signature, "-o", "json")
    assert status.code == 9, status.stderr
    assert status.json() == {"signature": signature, "status": "expired", "nonce_account": created["address"]}
    assert cli("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes").code == 0  # the journal let it go


def test_auto_never_pays_more_than_the_default_ceiling_without_max_fee(busy):
    # An RPC reporting absurd recent fees (10,000 lamports per compute unit) must not drain the wallet.
    cli = busy(min_priority_fee=10_000_000_000)
    before = wallet_state(cli)
    result = cli("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "--priority-fee", "auto")
    assert result.code == 10, result.stderr
    assert "more than the 0.01 SOL auto pays without a fee cap; nothing was signed" in result.stderr
    assert "give --max-fee LAMPORTS to allow it" in result.stderr  # the hint, from the command line's table
    # Allowed by --max-fee, the fee is still counted by the intent guard's SOL cap (--max-sol-cost).
    capped = cli(
        "deposit",
        "--asset",
        "USDC",
        "--amount",
        "1",
        "--send",
        "--yes",
        "--priority-fee",
        "auto",
        "--max-fee",
        "1000000000",
        "--max-sol-cost",
        "0.01",
        "-o",
        "json",
    )
    assert capped.code == 10, capped.stderr
    assert "fee and rent come to" in capped.stderr and "more than the 0.01 SOL allowed" in capped.stderr
    assert wallet_state(cli) == before


@pytest.mark.process  # `yield` waits in a thread while the test moves the nonce on
def test_waiting_for_a_nonce_transaction_ends_expired_when_its_nonce_moves_on(busy, tmp_path, isolated):
    import threading
    import time

    from solders.hash import Hash

    from yieldcli.chain.keys.sign import sign_transaction
    from yieldcli.chain.transact.journal import Journal
    from yieldcli.chain.tx.instructions import build_transaction
    from yieldcli.chain.tx.nonce import NonceAccount, build_on_nonce, create_nonce_instructions

    cli = busy(drop_sends=10)  # every transaction's first ten copies are dropped: rebroadcasts keep it waiting
    runtime = cli.server.runtime
    user = demo_keypair()
    # The nonce account, created directly (sent until a copy gets through).
    new_account = Keypair()
    latest = Hash.from_string(rpc_call(cli.server.rpc_url, "getLatestBlockhash")["value"]["blockhash"])
    create = build_transaction(
        create_nonce_instructions(
            user.pubkey(), new_account.pubkey(), user.pubkey(), runtime.minimum_balance_for_rent_exemption(80)
        ),
        user.pubkey(),
        latest,
    )
    create = sign_transaction(create, [user, new_account]).transaction
    while not runtime.send_transaction(create).landed:
        pass
    nonce = cli("nonce", "show", str(new_account.pubkey()), "-o", "json").json()
    built = cli(
        "deposit", "--asset", "USDC", "--amount", "1", "--ix", "--nonce", nonce["address"], "--sign", "-o", "json"
    )
    signed = tmp_path / "signed.json"
    signed.write_text(built.stdout)
    before = wallet_state(cli)
    results = []
    waiting = threading.Thread(
        target=lambda: results.append(
            cli(
                "tx",
                "send",
                str(signed),
                "--expect",
                "deposit:USDC:1",
                "--nonce",
                nonce["address"],
                "--yes",
                "-o",
                "json",
                timeout=120,
            )
        )
    )
    waiting.start()
    journal = Journal(isolated / ".local" / "share" / "yield" / "in-flight.json")
    deadline = time.monotonic() + 60
    while not journal.entries() and time.monotonic() < deadline:
        time.sleep(0.05)  # until the send is journaled; the outcome below does not depend on timing
    [entry] = journal.entries()
    assert entry.last_valid_block_height is None and entry.nonce_account == nonce["address"]
    # Meanwhile the authority uses the nonce for another transaction (sent until a copy gets through).
    account = NonceAccount(
        Pubkey.from_string(nonce["address"]), user.pubkey(), Hash.from_string(nonce["nonce"]), 5000, 0
    )
    other = sign_transaction(build_on_nonce([], user.pubkey(), account), [user]).transaction
    while not runtime.send_transaction(other).landed:
        pass
    waiting.join()
    [result] = results
    assert result.code == 9, result.stderr
    assert (
        f"its durable nonce (account {nonce['address']}) moved on without it landing; nothing was spent"
        in result.stderr
    )
    assert result.json()["status"] == "expired" and result.json()["nonce_account"] == nonce["address"]
    assert journal.entries() == []
    lamports, position = wallet_state(cli)
    assert position == before[1] and lamports == before[0] - 5_000  # only the other transaction's fee


def test_every_transaction_command_takes_a_priority_fee(busy, tmp_path):
    cli = busy()

    def programs(body):
        return [ix["program"] for ix in body["review"]["instructions"]]

    for command in (
        ["withdraw", "--asset", "USDC", "--amount", "1"],
        ["close-account", "--asset", "USDC"],
        ["deposit", "--asset", "USDC", "--amount", "1", "--ix"],
    ):
        result = cli(*command, "--priority-fee", "1000", "-o", "json")
        assert result.code == 0, result.stderr
        body = result.json()
        assert body["fee"]["compute_unit_price"] == 1000 and programs(body)[:2] == ["Compute Budget Program"] * 2
        assert body["fee"]["compute_unit_limit"] < 200_000  # measured, not the runtime's default per instruction
    # On a durable nonce, advance-nonce stays first (the runtime requires it), the budget follows.
    created = cli("nonce", "create", "--authority", DEMO_WALLET, "-k", cli.keypair, "--yes", "-o", "json").json()
    on_nonce = cli(
        "deposit",
        "--asset",
        "USDC",
        "--amount",
        "1",
        "--ix",
        "--nonce",
        created["address"],
        "--priority-fee",
        "1000",
        "-o",
        "json",
    )
    assert on_nonce.code == 0, on_nonce.stderr
    assert programs(on_nonce.json())[:3] == ["System Program", "Compute Budget Program", "Compute Budget Program"]
    # tx send sets the fee of an unsigned transaction from anywhere, then signs and sends it.
    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(cli("deposit", "--asset", "USDC", "--amount", "1", "-o", "json").stdout)
    sent = cli(
        "tx", "send", str(unsigned), "--expect", "deposit:USDC:1", "--priority-fee", "2000", "--yes", "-o", "json"
    )
    assert sent.code == 0, sent.stderr
    assert sent.json()["status"] == "confirmed" and sent.json()["fee"]["compute_unit_price"] == 2000


def test_the_review_for_people_shows_the_fee_as_base_plus_priority(busy):
    cli = busy()
    review = cli("deposit", "--asset", "USDC", "--amount", "1", "--priority-fee", "1000", "-o", "table")
    assert review.code == 0, review.stderr
    fee_lines = [line for line in review.stdout.splitlines() if "= base 0.000005 + priority 0.0000000" in line]
    assert len(fee_lines) == 1, review.stdout  # said once, with its parts
    assert "micro-lamports each" in review.stdout
