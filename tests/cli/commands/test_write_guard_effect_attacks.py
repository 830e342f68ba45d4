"""Issue 25: attacks on the guard's proof of the whole effect, on every face of `yield` that signs.

A stand-in service doctors the sandbox's own answers (tests/cli/effect_attacks.py) with each kind the
issue names: the pinned program's Close of another position beside the asked action, payouts under an
allowance, a deposit into another strategy's position, InitVault paid by the user, a transaction whose
lookup table does not exist, a durable nonce or a co-signature nobody asked for. Each is tried with
`--send --yes`, with `--sign`, and handed to `yield tx sign/send --expect`: refused before any signature
(exit 10; 11 where the simulation cannot run), nothing sent, and the sandbox's chain (every position,
every token account, the wallet's SOL) unchanged. One sandbox serves the whole module: nothing an
attack does may land, so no test changes what the next one sees.
"""

from __future__ import annotations

import base64

import pytest
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from tests.cli import effect_attacks as ea
from tests.cli import effect_world as ew
from tests.cli.effect_attacks import ATTACKS
from tests.cli.effect_world import DEPOSIT
from tests.cli.stand_in import USDC_MINT, USER_ATA, WALLET
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, SECOND_STRATEGY_ID
from yieldcli.solana import strategy_program as sp

shared_world, world_of_a_test = ew.fixtures()


# `--send` and `tx sign --expect` for every attack (the service's path, and the path that names no
# strategy); `--sign` and `tx send` too where they take another way through the guard (no simulation,
# a lifetime or a signature already in place) and for the first attack of the issue.
ALL = ("send", "sign", "tx sign", "tx send")
BOTH = ("send", "tx sign")
FACES = {
    "k1-deposit-close-other-position": ALL,
    "k1-withdraw-close-other-position": ("send",),
    "k1-close-account-close-other-position": ("send",),
    "k1-deposit-close-other-position-recipient-in-table": BOTH,
    "k1-trusted-deposit-close-other-position-into-it": ("send",),  # `tx` names no strategy: no trust there
    "k2-withdraw-all-99-to-user-rest-to-stranger": BOTH,
    "k2-withdraw-sol-all-unwrap-99-to-user-rest-to-stranger": BOTH,
    "k2-withdraw-exclude-fees-2000-and-15-usdc-of-other-position-to-stranger": ("send",),
    "k2-withdraw-jitosol-all-covers-15-usdc-of-other-position-to-stranger": BOTH,
    "k3-deposit-into-second-strategy": BOTH,
    "k3-deposit-opens-position-in-unoffered-strategy": BOTH,
    "k4-deposit-init-vaults-prefunded": (*BOTH, "sign"),
    "k4-withdraw-init-vault": ("send",),
    "k5-deposit-whole-balance-to-missing-table": ALL,
    "k5-deposit-close-position-to-missing-table": ("sign", "tx sign"),
    "k6-deposit-on-attackers-nonce-attacker-signed": ALL,
    "k6-deposit-on-fresh-nonce-of-the-user": BOTH,
    "k6-withdraw-cosigned-by-stranger": BOTH,
}
CASES = [pytest.param(name, face, id=f"{name}-{face.replace(' ', '-')}") for name in ATTACKS for face in FACES[name]]


def nothing_signed(body: dict) -> None:
    """No signature of the user in what was printed, and nothing sent."""
    assert not body.get("signature"), body.get("signature")
    if body.get("transaction"):
        tx = VersionedTransaction.from_bytes(base64.b64decode(body["transaction"]))
        slot = list(tx.message.account_keys).index(WALLET)
        assert tx.signatures[slot] == Signature.default(), "the user's slot is signed"


def the_attack_runs(w, body: dict) -> None:
    """The doctored transaction is one the chain would execute: the refusal is the guard's, not a fault."""
    if body.get("transaction"):
        tx = VersionedTransaction.from_bytes(base64.b64decode(body["transaction"]))
        assert w.runtime.simulate(tx)["err"] is None, w.runtime.simulate(tx)


def attempt(w, request: ew.Request, face: str, tmp_path):
    if face == "send":
        return w.yield_(*request.args, "--send", "--yes", "-o", "json")
    if face == "sign":
        return w.yield_(*request.args, "--sign", "-o", "json")
    saved = tmp_path / "from-the-service.b64"
    saved.write_text(ew.served(w, request.path, request.params))  # the doctored answer, unsigned
    command = face.split()[1]
    more = ["--yes"] if command == "send" else []
    return w.yield_("tx", command, str(saved), "--expect", request.expect, *more, "-o", "json")


@pytest.mark.parametrize("name, face", CASES)
def test_each_attack_is_refused_before_signing_and_the_chain_is_unchanged(world, name, face, tmp_path):
    request, setup, codes = ATTACKS[name]
    setup(world)
    before = ew.state(world)
    refused = attempt(world, request, face, tmp_path)
    assert refused.code in codes, (refused.code, refused.stderr)
    body = refused.json() if refused.stdout.strip() else {}
    nothing_signed(body)
    assert ew.state(world) == before
    if codes == {10}:
        the_attack_runs(world, body)


def test_the_review_names_the_strategy_each_strategy_instruction_targets(world, tmp_path):
    """The deposit's verdicts name the strategy (id and key) its instruction targets: the asked one when
    it is, the other one when the service swapped the key; on the `tx` path too."""
    asked = world.yield_(*DEPOSIT.args, "-o", "json")
    assert asked.code == 0, asked.stderr
    named = ea.strategy_named(asked.json()["effect"]["instructions"], DEMO_STRATEGY_ID)
    assert [v["strategy"]["id"] for v in named] == [DEMO_STRATEGY_ID]
    world.doctor(ea.deposit_into(SECOND_STRATEGY_ID)(world))
    swapped = world.yield_(*DEPOSIT.args, "-o", "json")
    assert swapped.code == 10, swapped.stderr
    named = ea.strategy_named(swapped.json()["effect"]["instructions"], SECOND_STRATEGY_ID)
    # Not the strategy asked: named by its key (an id is known only for the one asked).
    assert [v["strategy"]["id"] for v in named] == [None] and not named[0]["ok"]
    saved = tmp_path / "swapped.json"
    saved.write_text(swapped.stdout)
    on_tx = world.yield_("tx", "inspect", str(saved), "--expect", DEPOSIT.expect, "-o", "json")
    assert on_tx.code == 10, on_tx.stderr
    ea.strategy_named(on_tx.json()["effect"]["instructions"], SECOND_STRATEGY_ID)


UNSTATED = {
    # name: the one real instruction of a transaction from anywhere, paid by the user
    "position-closed-to-stranger": lambda w: sp.close(WALLET, w.stranger_ata, USDC_MINT, ew.POSITION),
    "withdrawal-into-own-account": lambda w: sp.withdraw(WALLET, USER_ATA, USDC_MINT, DEMO_STRATEGY_ID, 5 * 10**6),
    "deposit-from-own-account": lambda w: sp.deposit(WALLET, WALLET, USER_ATA, USDC_MINT, DEMO_STRATEGY_ID, 10**6),
}


@pytest.mark.parametrize("name", list(UNSTATED))
def test_tx_sign_and_send_without_expect_refuse_any_effect_beyond_the_fee_with_the_hint(world, name, tmp_path):
    saved = tmp_path / "unstated.b64"
    saved.write_text(ea.unstated(world, UNSTATED[name](world)))
    before = ew.state(world)
    for command in ("sign", "send"):
        refused = world.yield_("tx", command, str(saved), *(["--yes"] if command == "send" else []), "-o", "json")
        assert refused.code == 10, (command, refused.code, refused.stderr)
        assert "--expect" in refused.stderr, refused.stderr
        nothing_signed(refused.json() if refused.stdout.strip() else {})
    assert ew.state(world) == before
