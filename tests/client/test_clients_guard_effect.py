"""Issue 25 through the Python `Client`, whose confirm callback always says yes: every attack of
tests/cli/effect_attacks.py is refused by `.send()` and by `.sign()` (Refused, exit code 10; or
SimulationFailed / Refused with 11 where the simulation cannot run) before the question is asked,
nothing is signed or sent, and the chain is unchanged. `prepare_transaction` (the library's
`tx sign/send`) refuses them too, stated or not. One sandbox serves the whole module.
"""

from __future__ import annotations

import pytest

from tests.cli import effect_attacks as ea
from tests.cli import effect_world as ew
from tests.cli.effect_attacks import ATTACKS
from tests.cli.stand_in import USDC_MINT, USER_ATA, WALLET
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID
from yieldcli.solana import strategy_program as sp

shared_world, world_of_a_test = ew.fixtures()


class AlwaysYes:
    """A confirm callback that says yes to anything, and remembers that it was asked."""

    def __init__(self):
        self.asked = 0

    def __call__(self, *args):
        self.asked += 1
        return True


def refused_before_asking(world, codes, attempt) -> None:
    from yieldcli.errors import YieldError

    yes = AlwaysYes()
    before = ew.state(world)
    with pytest.raises(YieldError) as refused:
        outcome = attempt(yes)
        pytest.fail(f"not refused: {outcome!r}")
    assert int(refused.value.exit_code) in codes, (refused.value.exit_code, refused.value)
    assert yes.asked == 0, "the question was asked about a transaction that does not do what was asked"
    assert ew.state(world) == before


# Each kind once per method: the library shares the guard with the command line, so every attack need not
# be repeated; those whose path differs (no simulation, a lifetime, a co-signature) are all here.
NAMES = [
    "k1-deposit-close-other-position",
    "k1-deposit-close-other-position-recipient-in-table",
    "k2-withdraw-all-99-to-user-rest-to-stranger",
    "k2-withdraw-sol-all-unwrap-99-to-user-rest-to-stranger",
    "k2-withdraw-exclude-fees-2000-and-15-usdc-of-other-position-to-stranger",
    "k2-withdraw-jitosol-all-covers-15-usdc-of-other-position-to-stranger",
    "k3-deposit-opens-position-in-unoffered-strategy",
    "k4-deposit-init-vaults-prefunded",
    "k5-deposit-whole-balance-to-missing-table",
    "k6-deposit-on-attackers-nonce-attacker-signed",
    "k6-deposit-on-fresh-nonce-of-the-user",
    "k6-withdraw-cosigned-by-stranger",
]


@pytest.mark.parametrize("method", ["send", "sign"])
@pytest.mark.parametrize("name", NAMES)
def test_the_client_refuses_each_attack_with_an_always_yes_confirm(world, name, method):
    request, setup, codes = ATTACKS[name]
    setup(world)
    with world.client() as client:
        refused_before_asking(world, codes, lambda yes: getattr(request.call(client), method)(confirm=yes))


@pytest.mark.parametrize(
    "name",
    [
        "k1-deposit-close-other-position",
        "k3-deposit-into-second-strategy",
        "k5-deposit-whole-balance-to-missing-table",
        "k6-deposit-on-attackers-nonce-attacker-signed",
    ],
)
def test_prepare_transaction_with_the_stated_action_refuses_each_attack(world, name):
    request, setup, codes = ATTACKS[name]
    setup(world)
    hostile = ew.served(world, request.path, request.params)
    with world.client() as client:
        refused_before_asking(
            world,
            codes,
            lambda yes: client.prepare_transaction(hostile, "deposit", asset="USDC", amount="10").sign(confirm=yes),
        )


@pytest.mark.parametrize(
    "instruction",
    [
        pytest.param(lambda w: sp.close(WALLET, w.stranger_ata, USDC_MINT, ew.POSITION), id="position-to-stranger"),
        pytest.param(
            lambda w: sp.withdraw(WALLET, USER_ATA, USDC_MINT, DEMO_STRATEGY_ID, 5 * 10**6), id="withdraw-to-self"
        ),
    ],
)
def test_prepare_transaction_with_no_stated_action_refuses_any_effect_beyond_the_fee(world, instruction):
    hostile = ea.unstated(world, instruction(world))
    with world.client() as client:
        for method in ("sign", "send"):
            refused_before_asking(
                world, {10}, lambda yes, m=method: getattr(client.prepare_transaction(hostile), m)(confirm=yes)
            )
