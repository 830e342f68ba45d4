"""A signature-verification precompile in a write (issue 35): Ed25519 verifying one valid signature many
times, each charged as a signature. Refused by name (`refused.precompile`, exit 10) on every face:
`ACTION --send --yes`, `--sign`, the Python Client with a confirm that always says yes, `tx sign/send
--expect`, and a `tx sign` with no intent. The chain is unchanged after each; the legitimate flow
still confirms, and the fee the chain took (the wallet's balance delta) is the fee the JSON shows."""

from __future__ import annotations

import base64
import json

import pytest
from solders.hash import Hash
from solders.message import MessageV0
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from tests.cli.stand_in import WALLET, rpc_call
from tests.guard.precompiles import ed25519_verify, precompiles, secp256r1_verify
from yieldcli.errors import Refused
from yieldcli.solana import programs

N = 30  # fits beside each action in one packet: 0.00015 SOL of signatures


def with_precompile(make=ed25519_verify, n=N):  # noqa: ANN001, ANN201
    return lambda ixs: ixs + precompiles(make, n)


def balance(world) -> int:  # noqa: ANN001
    return rpc_call(world.sandbox.rpc_url, "getBalance", [str(WALLET), {"commitment": "confirmed"}])["value"]


def error_kind(result) -> str:  # noqa: ANN001
    return json.loads(result.stderr.strip().splitlines()[-1])["error"]["kind"]


COMMANDS = [
    ("deposit", "--asset", "USDC", "--amount", "10"),
    ("withdraw", "--asset", "USDC", "--amount", "5"),
    ("close-account", "--asset", "USDC"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("make", [ed25519_verify, secp256r1_verify], ids=["ed25519", "secp256r1"])
def test_each_action_with_a_precompile_is_refused_on_send_and_sign(world, command, make):
    world.doctor(with_precompile(make, N if make is ed25519_verify else 24))
    before = world.snapshot()
    for how in (("--send", "--yes"), ("--sign", "--yes")):
        refused = world.yield_(*command, *how, "-o", "json")
        assert refused.code == 10, refused.stderr
        assert error_kind(refused) == "refused.precompile", refused.stderr
        assert "signature-verification precompile" in refused.stderr and "this request needs none" in refused.stderr
        assert not refused.stdout or "signature" not in refused.json()
    assert world.snapshot() == before


def test_the_review_shows_every_lamport_of_the_fee_and_the_refused_verdict(world):
    world.doctor(with_precompile())
    shown = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "-o", "json").json()
    fee = shown["fee"]
    assert (fee["signatures"], fee["precompile_signatures"], fee["precompile"]) == (1, N, N * 5_000)
    assert fee["total"] == fee["base"] + fee["precompile"] + fee["priority"]
    detail = shown["effect"]["observed"]["fee_detail"]
    assert detail["precompile_signatures"] == N * 5_000 and detail["total"] == fee["total"]
    verdict = shown["effect"]["instructions"][-1]
    assert (verdict["kind"], verdict["ok"]) == ("precompile", False)
    table = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "-o", "table").stdout
    assert f"+ precompile signatures {N * 5_000 / 10**9:f}".rstrip("0") in table, table
    assert "✗ instruction" in table and "signature-verification precompile (Ed25519)" in table, table


def test_the_python_client_with_an_always_yes_confirm_is_refused(world):
    world.doctor(with_precompile())
    before = world.snapshot()
    with world.client() as client, pytest.raises(Refused, match="signature-verification precompile") as refused:
        client.deposit("USDC", "10").send(confirm=lambda *a: True)
    assert refused.value.kind == "refused.precompile"
    assert world.snapshot() == before


def test_tx_sign_and_send_refuse_it_with_and_without_an_intent(world, tmp_path):
    world.doctor(with_precompile())
    saved = tmp_path / "doctored.json"
    saved.write_text(world.yield_("deposit", "--asset", "USDC", "--amount", "10", "-o", "json").stdout)
    before = world.snapshot()
    for command in ("sign", "send"):
        refused = world.yield_(
            "tx",
            command,
            str(saved),
            "--expect",
            "deposit:USDC:10",
            *(["--yes"] if command == "send" else []),
            "-o",
            "json",
        )
        assert refused.code == 10 and error_kind(refused) == "refused.precompile", refused.stderr
    # No intent: a transaction that should cost the fee alone, its fee raised by 30 signatures.
    blockhash = rpc_call(world.sandbox.rpc_url, "getLatestBlockhash", [{"commitment": "confirmed"}])
    recent = Hash.from_string(blockhash["value"]["blockhash"])
    for extra, code in (([ed25519_verify(N)], 10), ([], 0)):
        note = programs.memo("a note", [])
        message = MessageV0.try_compile(WALLET, [note, *extra], [], recent)
        unsigned = VersionedTransaction.populate(message, [Signature.default()])
        plain = tmp_path / f"plain-{code}.json"
        plain.write_text(json.dumps({"transaction": base64.b64encode(bytes(unsigned)).decode()}))
        signed = world.yield_("tx", "sign", str(plain), "-o", "json")
        assert signed.code == code, signed.stderr
        if code:
            assert error_kind(signed) == "refused.precompile", signed.stderr
    assert world.snapshot() == before


def test_the_legitimate_deposit_confirms_and_the_chain_takes_the_fee_shown(world):
    before = balance(world)
    done = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes", "-o", "json")
    assert done.code == 0 and done.json()["status"] == "confirmed", done.stderr
    fee = done.json()["fee"]
    assert fee["precompile_signatures"] == 0 and fee["precompile"] == 0
    assert before - balance(world) == fee["total"] == done.json()["effect"]["observed"]["fee"]
