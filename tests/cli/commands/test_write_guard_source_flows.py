"""Issue 35, no false refusal: with another USDC account (holding more) and another wrapped-SOL account of
the user's on the chain (tests/cli/source_attacks.py), the legitimate flows confirm and leave those
accounts exactly as they were: `deposit --all` (the associated account's whole balance), a deposit from
and a withdrawal to a named non-associated `--token-account`, a SOL deposit that wraps into the
associated wrapped-SOL account, `withdraw --unwrap-wsol`, and the Python Client.
One sandbox serves the module, in the order written. (`tx send --expect` of the honest answers:
test_write_guard_effect_flows.py.)"""

from __future__ import annotations

import struct

from tests.cli import effect_world as ew
from tests.cli import source_attacks as sa
from tests.cli.effect_world import WITHDRAW_SOL_ALL_UNWRAP
from tests.cli.stand_in import USDC_MINT, USER_ATA

shared_world, world_of_a_test = ew.fixtures(flows=True)
USD = sa.USD


def held(w, account) -> int | None:
    found = w.runtime.get_account(account)
    return struct.unpack_from("<Q", bytes(found.data), 64)[0] if found is not None else None


def confirmed(result) -> dict:
    assert result.code == 0, result.stderr
    body = result.json()
    assert body["status"] == "confirmed" and body["effect"]["differences"] == [], body["effect"]
    return body


def others_untouched(w, usdc: int = sa.OTHER_USDC_HELD) -> None:
    assert held(w, sa.OTHER_USDC) == usdc
    assert held(w, sa.OTHER_WSOL) == sa.OTHER_WSOL_HELD


def test_deposit_all_takes_the_associated_accounts_whole_balance_only(world):
    sa.other_accounts(world)
    assert 0 < held(world, USER_ATA) < sa.OTHER_USDC_HELD
    confirmed(world.yield_(*sa.DEPOSIT_ALL.args, "--send", "--yes", "-o", "json"))
    assert held(world, USER_ATA) == 0
    others_untouched(world)


def test_a_named_non_associated_account_is_the_source_and_the_destination(world):
    other = str(sa.OTHER_USDC)
    confirmed(
        world.yield_(
            "deposit", "--asset", "USDC", "--amount", "10", "--token-account", other, "--send", "--yes", "-o", "json"
        )
    )
    assert held(world, sa.OTHER_USDC) == sa.OTHER_USDC_HELD - 10 * USD
    confirmed(
        world.yield_(
            "withdraw", "--asset", "USDC", "--amount", "5", "--token-account", other, "--send", "--yes", "-o", "json"
        )
    )
    assert held(world, USER_ATA) == 0  # nothing paid into, nor taken from, the associated account
    with world.client() as client:
        outcome = client.withdraw("USDC", "5", token_account=other).send(confirm=lambda *a: True)
    assert outcome.status == "confirmed", outcome
    assert held(world, USER_ATA) == 0 and held(world, sa.OTHER_WSOL) == sa.OTHER_WSOL_HELD


def test_sol_wraps_into_and_unwraps_from_the_associated_wrapped_sol_account_only(world):
    confirmed(world.yield_(*sa.DEPOSIT_SOL.args, "--send", "--yes", "-o", "json"))
    assert held(world, sa.OTHER_WSOL) == sa.OTHER_WSOL_HELD
    # (`--expect` cannot say "unwrap": the unwrap is asked on the command line)
    confirmed(world.yield_(*WITHDRAW_SOL_ALL_UNWRAP.args, "--send", "--yes", "-o", "json"))
    assert world.runtime.get_account(sa.WSOL_ATA) is None  # unwrapped: closed
    assert held(world, sa.OTHER_WSOL) == sa.OTHER_WSOL_HELD


def test_the_client_deposits_from_the_associated_account(world):
    world.runtime.mint_to(sa.WALLET, USDC_MINT, 3 * USD)
    start, other = held(world, USER_ATA), held(world, sa.OTHER_USDC)
    with world.client() as client:
        outcome = client.deposit("USDC", "1").send(confirm=lambda *a: True)
    assert outcome.status == "confirmed", outcome
    assert held(world, USER_ATA) == start - USD
    others_untouched(world, other)
