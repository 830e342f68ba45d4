"""Issue 35: the source the user meant and rent only where the action pays, on every face of `yield`
that signs (`--send --yes`, `--sign`, `tx sign/send --expect`, the Python `Client` whose confirm always
says yes). Each attack of tests/cli/source_attacks.py is refused before any signature (exit 10), nothing
is sent, and the sandbox's chain (every position, every token account, the wallet's SOL) is unchanged.
The transaction each doctors is one the chain would execute: the refusal is the guard's."""

from __future__ import annotations

import pytest

from tests.cli import effect_world as ew
from tests.cli import source_attacks as sa
from tests.cli.commands.test_write_guard_effect_attacks import attempt, nothing_signed, the_attack_runs

shared_world, world_of_a_test = ew.fixtures()

FACES = ("send", "sign", "tx sign", "tx send", "client")
NO_TX = {"withdraw-to-named-account-opens-the-associated-one"}  # `--expect` cannot name a token account
CASES = [
    pytest.param(name, face, id=f"{name}-{face.replace(' ', '-')}")
    for name in sa.ATTACKS
    for face in FACES
    if not (name in NO_TX and face.startswith("tx"))
]
REASONS = {
    "deposit-all-from-a-fuller-usdc-account": "takes from",
    "deposit-10-from-a-non-associated-account": "takes from",
    "deposit-sol-from-another-wsol-account": "takes from",
    "withdraw-unwrap-closes-another-wsol-account": "your other wrapped-SOL account",
    "withdraw-sol-opens-by-plain-create": "ATA Create, not CreateIdempotent",
    "withdraw-to-named-account-opens-the-associated-one": "the action does not pay into it",
}


@pytest.mark.parametrize("name, face", CASES)
def test_each_attack_is_refused_before_signing_and_the_chain_is_unchanged(world, name, face, tmp_path):
    from yieldcli.errors import Refused

    request, setup, codes = sa.ATTACKS[name]
    setup(world)
    before = ew.state(world)
    if face == "client":
        with world.client() as client, pytest.raises(Refused, match=REASONS[name]):
            request.call(client).send(confirm=lambda *a: True)
        assert ew.state(world) == before
        return
    refused = attempt(world, request, face, tmp_path)
    assert refused.code in codes, (refused.code, refused.stderr)
    assert REASONS[name] in refused.stdout + refused.stderr
    body = refused.json() if refused.stdout.strip() else {}
    nothing_signed(body)
    assert ew.state(world) == before
    if face == "send":
        the_attack_runs(world, body)
