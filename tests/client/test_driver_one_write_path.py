"""The command line and the library take a write down one path (`yieldcli.client.driver`): what
once differed between `yield` and `Client`, side by side against the sandbox served over loopback."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from tests.conftest import usdc_position, writing_client
from yieldcli import Confirmed, UsageError
from yieldcli.sandbox.demo import DEMO_WALLET, demo_keypair

UNIT = 1_000_000  # 1 USDC in base units


def _client(sandbox, tmp_path, keypair=None, **more):
    return writing_client(
        sandbox, tmp_path / "library-journal.json", keypair=keypair, trust_file=tmp_path / "no-trust.toml", **more
    )


def test_a_deposit_for_a_named_wallet_is_reviewed_without_a_keypair_on_both_faces(chain, sandbox, tmp_path):
    # yield: --wallet W and no keypair anywhere: a review.
    review = ("deposit", "--asset", "USDC", "--amount", "1", "--wallet", DEMO_WALLET, "-o", "json")
    cli = chain(*review, env={"YIELD_KEYPAIR": ""})
    assert cli.code == 0, cli.stderr
    assert cli.json()["status"] == "unsigned" and cli.json()["effect"]["differences"] == []
    # Client: the same, with no keypair= at all; signing then needs one, and nothing was signed.
    with _client(sandbox, tmp_path) as client:
        prepared = client.deposit("USDC", Decimal("1"), wallet=DEMO_WALLET)
        assert prepared.effect is not None and prepared.effect.ok
        assert prepared.effect.expected == cli.json()["effect"]["expected"]
        with pytest.raises(UsageError) as no_keypair:
            prepared.sign(confirm=lambda text, p: True)
    assert no_keypair.value.kind == "usage.no_keypair"


def test_a_transaction_that_landed_is_its_outcome_before_any_simulation_on_both_faces(chain, sandbox, tmp_path):
    made = chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-o", "json")
    assert made.code == 0, made.stderr
    signed = made.json()["transaction"]
    path = tmp_path / "signed.json"
    path.write_text(made.stdout)
    before = usdc_position(chain)
    sent = chain("tx", "send", str(path), "--yes", "-o", "json")
    assert sent.code == 0 and sent.json()["status"] == "confirmed", sent.stderr
    assert usdc_position(chain) == before + UNIT

    # Sent again: yield finds it landed before simulating; so does the Client, prepared and sent.
    again = chain("tx", "send", str(path), "--yes", "-o", "json")
    assert again.code == 0, again.stderr
    assert again.json()["already_processed"] is True and again.json()["simulation"] is None
    with _client(sandbox, tmp_path, keypair=demo_keypair()) as client:
        prepared = client.prepare_transaction(signed)
        assert prepared.result["already_processed"] is True and prepared.result.get("simulation") is None
        outcome = prepared.send(confirm=lambda text, p: True)
    assert isinstance(outcome, Confirmed) and outcome.signature == sent.json()["signature"]
    assert usdc_position(chain) == before + UNIT  # nothing moved twice


def test_the_profiles_priority_fee_is_a_default_on_both_faces(chain, sandbox, tmp_path):
    # YIELD_PRIORITY_FEE is a default: yield sets it on a transaction it builds...
    cli = chain("deposit", "--asset", "USDC", "--amount", "1", "-o", "json", env={"YIELD_PRIORITY_FEE": "7"})
    assert cli.code == 0, cli.stderr
    assert cli.json()["fee"]["compute_unit_price"] == 7
    # ...as the Client does with priority_fee=; the library resolves both into the same options.
    with _client(sandbox, tmp_path, keypair=demo_keypair()) as client:
        prepared = client.deposit("USDC", Decimal("1"), priority_fee=7)
    assert prepared.result["fee"] == cli.json()["fee"]
    assert json.dumps(prepared.result["fee"], sort_keys=True) == json.dumps(cli.json()["fee"], sort_keys=True)


def test_a_nonce_asks_for_instructions_on_both_faces(chain, sandbox, tmp_path):
    # `nonce=` from Python builds from /ix; `--nonce` alone does too (it once needed --ix beside it).
    created = chain("nonce", "create", "--authority", DEMO_WALLET, "--yes", "-o", "json")
    assert created.code == 0, created.stderr
    nonce = created.json()["address"]
    cli = chain("deposit", "--asset", "USDC", "--amount", "1", "--nonce", nonce, "-o", "json")
    assert cli.code == 0, cli.stderr
    first = cli.json()["review"]["instructions"][0]
    assert first["program"] == "System Program" and first["kind"] == "advanceNonceAccount", first
    with _client(sandbox, tmp_path) as client:
        prepared = client.deposit("USDC", Decimal("1"), wallet=DEMO_WALLET, nonce=nonce)
        assert prepared.result["review"]["instructions"][0] == first
        assert prepared.effect is not None and prepared.effect.ok


def test_a_warning_for_python_is_logged_not_dropped(sandbox, tmp_path, caplog):
    # The command line draws the pipeline's warnings; the Client logs them on the `yieldcli` logger.
    with _client(sandbox, tmp_path, keypair=demo_keypair()) as client:
        detached = client.deposit("USDC", Decimal("1")).send(confirm=lambda text, p: True, wait=False)
        with caplog.at_level("WARNING", logger="yieldcli"):
            outcome = client.deposit("USDC", Decimal("1")).send(confirm=lambda text, p: True)
    assert isinstance(outcome, Confirmed)
    said = [record.getMessage() for record in caplog.records if record.name == "yieldcli"]
    assert any(detached.signature in line and "landed" in line for line in said), said
