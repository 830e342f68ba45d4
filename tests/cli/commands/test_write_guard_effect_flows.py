"""Issue 25, no false refusal: the legitimate flows the other tests do not already cover confirm.

Covered elsewhere, and to stay green: every action with and without `--priority-fee auto` through the
stand-in (test_write_intent_attacks.py::test_the_legitimate_flows_confirm: deposit amount, `--all`, SOL;
withdraw partial, `--all`, `--exclude-fees`, SOL `--unwrap-wsol`; close-account), close with
`--recipient` (test_write_intent_attacks.py), the two-party payer flow (test_write.py), the nonce flow on two
machines (test_write_busy_network.py, tests/chain/keys/ledger), a trusted-destination deposit (test_trust_cmd.py), the
Ledger (tests/chain/keys/ledger). Here: each action's honest answer handed to `yield tx send --expect`, a
transaction that costs only the fee signed without `--expect`, and a deposit built on the user's own
nonce by `yield` and by the Python client. One sandbox serves the module, in the order written.
"""

from __future__ import annotations

import pytest

from tests.cli import effect_attacks as ea
from tests.cli import effect_world as ew
from tests.cli.effect_world import CLOSE, DEPOSIT, WITHDRAW, WITHDRAW_ALL, Request
from tests.cli.stand_in import WALLET
from yieldcli.solana import programs
from yieldcli.tokens import WSOL_MINT

DEPOSIT_SOL = Request(
    ("deposit", "--asset", "SOL", "--amount", "0.5"),
    "deposit:SOL:0.5",
    lambda c: c.deposit("SOL", "0.5"),
    "/deposit/tx",
    base_asset=WSOL_MINT,
    amount=5 * 10**8,
)


shared_world, world_of_a_test = ew.fixtures(flows=True)


def confirmed(result) -> dict:
    assert result.code == 0, result.stderr
    body = result.json()
    assert body["status"] == "confirmed" and body["effect"]["differences"] == [], body["effect"]
    return body


@pytest.mark.parametrize(
    "request_", [DEPOSIT, DEPOSIT_SOL, WITHDRAW, WITHDRAW_ALL, CLOSE], ids=lambda r: r.expect.replace(":", "-")
)
def test_the_services_honest_answer_stated_to_tx_send_confirms(world, request_, tmp_path):
    saved = tmp_path / "honest.b64"
    saved.write_text(ew.served(world, request_.path, request_.params))
    signed = world.yield_("tx", "sign", str(saved), "--expect", request_.expect, "-o", "json")
    assert signed.code == 0 and signed.json()["missing_signers"] == [], signed.stderr
    confirmed(world.yield_("tx", "send", str(saved), "--expect", request_.expect, "--yes", "-o", "json"))


def test_a_transaction_that_costs_only_the_fee_is_signed_and_sent_without_expect(world, tmp_path):
    saved = tmp_path / "memo.b64"
    saved.write_text(ea.unstated(world, programs.memo("only the fee")))
    signed = world.yield_("tx", "sign", str(saved), "-o", "json")
    assert signed.code == 0 and signed.json()["missing_signers"] == [], signed.stderr
    sent = world.yield_("tx", "send", str(saved), "--yes", "-o", "json")
    assert sent.code == 0 and sent.json()["status"] == "confirmed", sent.stderr


def test_a_deposit_on_the_users_own_nonce_confirms_from_yield_and_from_the_client(world):
    created = world.yield_("nonce", "create", "--authority", str(WALLET), "-k", world.keypair, "--yes", "-o", "json")
    assert created.code == 0, created.stderr
    nonce = created.json()["address"]
    args = ("deposit", "--asset", "USDC", "--amount", "1", "--ix", "--nonce", nonce)
    body = confirmed(world.yield_(*args, "--send", "--yes", "-o", "json"))
    assert "advance" in str(body["review"]["instructions"][0]).lower()
    with world.client() as client:
        outcome = client.deposit("USDC", "1", ix=True, nonce=nonce).send(confirm=lambda *a: True)
    assert outcome.status == "confirmed", outcome
