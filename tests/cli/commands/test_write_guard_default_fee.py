"""A default priority fee (the environment's or the profile's) that could not apply, because the
transaction already carries a signature, does not put the signer in charge of the fee: the fee someone
else set is held to what is accepted when you set none. Found by a fresh attack on a sponsor signing a
user's deposit second."""

from __future__ import annotations

import base64

from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price
from solders.keypair import Keypair
from solders.message import to_bytes_versioned
from solders.transaction import VersionedTransaction

from tests.cli.stand_in import WALLET, decompile, recompile
from tests.conftest import write_keypair
from yieldcli.sandbox.demo import demo_keypair
from yieldcli.solana import programs

SOL = 1_000_000_000


def test_a_sponsors_default_fee_that_could_not_apply_lifts_no_cap(world, tmp_path):
    sponsor = Keypair()
    world.runtime.airdrop(sponsor.pubkey(), 2 * SOL)
    sponsor_file = write_keypair(tmp_path / "sponsor.json", sponsor)
    review = world.yield_(
        "deposit", "--asset", "USDC", "--amount", "10", "--payer", str(sponsor.pubkey()), "-o", "json"
    )
    assert review.code == 0, review.stderr
    built = VersionedTransaction.from_bytes(base64.b64decode(review.json()["transaction"]))
    # The user (with the service) sets a priority fee of 0.0084 SOL and signs their slot first.
    work = [i for i in decompile(built, world.tables) if str(i.program_id) != programs.COMPUTE_BUDGET_PROGRAM]
    costly = recompile(
        built, [set_compute_unit_limit(1_400_000), set_compute_unit_price(6_000_000), *work], world.tables
    )
    signatures = list(costly.signatures)
    signatures[list(costly.message.account_keys).index(WALLET)] = demo_keypair().sign_message(
        to_bytes_versioned(costly.message)
    )
    partly = tmp_path / "partly.b64"
    partly.write_text(base64.b64encode(bytes(VersionedTransaction.populate(costly.message, signatures))).decode())
    before = world.runtime.get_balance(sponsor.pubkey())
    env = {**world.env(), "YIELD_KEYPAIR": "", "YIELD_PRIORITY_FEE": "1"}  # the sponsor's small default
    sent = world.run(
        "tx", "send", str(partly), "-k", sponsor_file, "--wallet", str(WALLET), "--expect", "deposit:USDC:10",
        "--yes", "-o", "json", env=env,
    )  # fmt: skip
    assert sent.code == 10, sent.stdout + sent.stderr
    assert any("priority fee" in d and "did not ask for" in d for d in sent.json()["effect"]["differences"])
    assert world.runtime.get_balance(sponsor.pubkey()) == before
