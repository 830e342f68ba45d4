"""What the command line does that Python does too, through the same order builder and pipeline:
a write built on a durable nonce (`nonce=`, `nonce_authority=`, as `--ix --nonce --nonce-authority`),
and a transaction built elsewhere checked, signed and sent with its stated intent (as
`yield tx send --expect`). Against the sandbox's service and its real runtime on loopback.
"""

from __future__ import annotations

import base64
import json
from decimal import Decimal

import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from tests.library.wallet import Asked, landed, usdc_balance
from yieldcli import Confirmed, Refused, UsageError
from yieldcli.chain.transact.checks import message_of
from yieldcli.chain.tx.nonce import nonce_lifetime
from yieldcli.sandbox.demo import DEMO_WALLET, demo_keypair

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)


def _nonce_account(run, sandbox, tmp_path, authority: str) -> dict:
    """A nonce account created by `yield nonce create`, paid by the demo wallet."""
    payer = tmp_path / "demo.json"
    payer.write_text(json.dumps(list(bytes(demo_keypair()))))
    payer.chmod(0o600)
    created = run(
        "nonce", "create", "--authority", authority, "-k", str(payer), "-u", sandbox.rpc_url, "--yes", "-o", "json"
    )
    assert created.code == 0, created.stderr
    return created.json()


def _nonce_value(sandbox, address: str) -> bytes:
    return bytes(sandbox.runtime.get_account(Pubkey.from_string(address)).data)[40:72]


def test_a_deposit_on_a_durable_nonce_from_python(wallet, sandbox, run, tmp_path):
    nonce = _nonce_account(run, sandbox, tmp_path, DEMO_WALLET)
    before_value, before_usdc = _nonce_value(sandbox, nonce["address"]), usdc_balance(sandbox)
    prepared = wallet.deposit("USDC", Decimal("1.25"), nonce=nonce["address"])
    lifetime = nonce_lifetime(message_of(prepared.transaction))
    assert lifetime is not None and str(lifetime.account) == nonce["address"]  # built on the nonce, advance first
    assert str(prepared.transaction.message.recent_blockhash) == nonce["nonce"]
    assert prepared.effect is not None and prepared.effect.ok
    outcome = prepared.send(confirm=Asked(True))
    assert isinstance(outcome, Confirmed) and landed(sandbox, outcome.signature).err is None
    assert before_usdc - usdc_balance(sandbox) == 1_250_000
    assert _nonce_value(sandbox, nonce["address"]) != before_value  # landing advanced the nonce


def test_a_nonce_authority_keypair_signs_and_a_wrong_one_is_refused(wallet, sandbox, run, tmp_path):
    authority = Keypair()
    nonce = _nonce_account(run, sandbox, tmp_path, str(authority.pubkey()))
    with pytest.raises(UsageError) as refused:
        wallet.deposit("USDC", "1", nonce=nonce["address"], nonce_authority=str(Keypair().pubkey()))
    assert refused.value.kind == "usage.nonce.authority"
    prepared = wallet.deposit("USDC", "1", nonce=nonce["address"], nonce_authority=authority)
    assert prepared.effect is not None and prepared.effect.ok
    outcome = prepared.send(confirm=Asked(True))
    assert isinstance(outcome, Confirmed)
    # Both the wallet and the nonce's authority signed.
    assert {str(s.address) for s in prepared.review.signers} >= {DEMO_WALLET, str(authority.pubkey())}


def test_nonce_authority_without_a_nonce_is_refused_before_any_request(wallet):
    with pytest.raises(UsageError) as refused:
        wallet.deposit("USDC", "1", nonce_authority=str(Keypair().pubkey()))
    assert refused.value.kind == "usage.nonce.authority_alone"


def _built_elsewhere(wallet) -> str:
    """An unsigned deposit of 2 USDC as another program would hand it over: base64 text."""
    return base64.b64encode(bytes(wallet.deposit("USDC", "2").transaction)).decode()


def test_a_transaction_built_elsewhere_is_checked_against_what_it_is_said_to_do_then_sent(wallet, sandbox):
    text = _built_elsewhere(wallet)
    before = usdc_balance(sandbox)
    prepared = wallet.prepare_transaction(text, "deposit", asset="USDC", amount=Decimal("2"))
    assert prepared.effect is not None and prepared.effect.ok
    assert prepared.effect.summary.startswith("deposit 2 USDC")
    outcome = prepared.send(confirm=Asked(True))
    assert isinstance(outcome, Confirmed)
    assert before - usdc_balance(sandbox) == 2_000_000


def test_a_transaction_that_does_more_than_it_is_said_to_is_refused(wallet, sandbox):
    before = usdc_balance(sandbox)
    prepared = wallet.prepare_transaction(_built_elsewhere(wallet), "deposit", asset="USDC", amount="1")
    assert prepared.effect is not None and not prepared.effect.ok
    asked = Asked(True)
    with pytest.raises(Refused):
        prepared.send(confirm=asked)
    assert asked.questions == [] and usdc_balance(sandbox) == before  # refused before any question or signature


def test_a_transaction_with_no_stated_intent_may_only_cost_fees(wallet):
    prepared = wallet.prepare_transaction(_built_elsewhere(wallet))
    assert prepared.effect is not None and not prepared.effect.ok  # it moves USDC: more than fees


def test_a_stated_action_the_pipeline_does_not_know_is_refused(wallet):
    with pytest.raises(UsageError) as refused:
        wallet.prepare_transaction(_built_elsewhere(wallet), "swap", asset="USDC")
    assert refused.value.kind == "usage.action.unknown" and "deposit, withdraw, close-account" in refused.value.message
