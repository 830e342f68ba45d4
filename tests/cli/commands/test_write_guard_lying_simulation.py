"""Issue 35, a fifth round: an RPC that lies about the simulation (tests/cli/commands/lying_simulation.py
answers the doctored transaction's simulation with the honest one's) leaves only what the guard proves
from the instructions themselves. These four changes were caught by the simulation alone; each is now
refused before any signature on `--send --yes`, `--sign` and the Python `Client` whose confirm always says
yes, and the sandbox's chain is unchanged:
- a SOL deposit that wraps 5 SOL more than the deposit needs;
- SOL sent into the wrapped-SOL account a second time, with no SyncNative after it;
- a withdrawal to a named wrapped-SOL account that also opens the user's associated one;
- a close of an empty position to a recipient that also opens the recipient's account.
And the fee of a compute-unit price with no limit is the one the chain takes, to the lamport, also when
the RPC hides part of it (a limit counted as agave does: 3,000 units per builtin's instruction).
One sandbox serves the module, in the order written (the close, last, needs the position emptied)."""

from __future__ import annotations

import struct

import pytest
from solders.compute_budget import set_compute_unit_price
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from tests.cli import effect_world as ew
from tests.cli import source_attacks as sa
from tests.cli.commands.lying_simulation import LyingRpc, lying_doctor
from tests.cli.commands.test_write_guard_effect_attacks import nothing_signed
from tests.cli.stand_in import USDC_MINT, USER_ATA, WALLET
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp

shared_world, world_of_a_test = ew.fixtures(flows=True)
FACES = ("send", "sign", "client")
SYSTEM = Pubkey.from_string(programs.SYSTEM_PROGRAM)
COMPUTE_BUDGET = Pubkey.from_string(programs.COMPUTE_BUDGET_PROGRAM)
RECIPIENT = Keypair.from_seed(bytes([37]) * 32).pubkey()


@pytest.fixture(scope="module")
def rpc(shared):
    lying = LyingRpc(shared.sandbox.rpc_url)
    yield lying
    lying.stop()


def _is_wrap(ix: Instruction) -> bool:
    return ix.program_id == SYSTEM and bytes(ix.data)[:4] == struct.pack("<I", 2)


def overwrap(ixs: list[Instruction]) -> list[Instruction]:
    """The wrap's transfer carries 5 SOL more than the deposit lacks (synced after, as the service does)."""
    wraps = [ix for ix in ixs if _is_wrap(ix)]
    assert len(wraps) == 1, "the SOL deposit served must wrap"
    more = struct.unpack_from("<Q", bytes(wraps[0].data), 4)[0] + 5 * sa.SOL
    bigger = transfer(TransferParams(from_pubkey=WALLET, to_pubkey=sa.WSOL_ATA, lamports=more))
    return [bigger if _is_wrap(ix) else ix for ix in ixs]


def unsynced(ixs: list[Instruction]) -> list[Instruction]:
    """5 SOL more sent into the wrapped-SOL account after the deposit, never synced."""
    assert any(_is_wrap(ix) for ix in ixs), "the SOL deposit served must wrap"
    return [*ixs, transfer(TransferParams(from_pubkey=WALLET, to_pubkey=sa.WSOL_ATA, lamports=5 * sa.SOL))]


def _idempotent(owner: Pubkey, mint: Pubkey) -> Instruction:
    made = programs.create_associated_token_account(WALLET, owner, mint)
    return Instruction(made.program_id, b"\x01", made.accounts)


def opens_wsol_ata(ixs: list[Instruction]) -> list[Instruction]:
    return [_idempotent(WALLET, sa.WSOL), *ixs]


def opens_recipients_account(ixs: list[Instruction]) -> list[Instruction]:
    return [_idempotent(RECIPIENT, USDC_MINT), *ixs]


# name: (the command's arguments, the Client's call, the change, what the refusal says)
CASES = {
    "sol-deposit-wraps-5-sol-more": (
        ("deposit", "--asset", "SOL", "--amount", "0.5"),
        lambda c: c.deposit("SOL", "0.5"),
        overwrap,
        "the deposit needs 0.5 SOL wrapped there",
    ),
    "sol-sent-into-the-wsol-account-unsynced": (
        ("deposit", "--asset", "SOL", "--amount", "0.5"),
        lambda c: c.deposit("SOL", "0.5"),
        unsynced,
        "one of 2 transfers into that account",
    ),
    "withdraw-to-named-wsol-account-opens-the-associated-one": (
        ("withdraw", "--asset", "SOL", "--amount", "0.1", "--token-account", str(sa.OTHER_WSOL)),
        lambda c: c.withdraw("SOL", "0.1", token_account=str(sa.OTHER_WSOL)),
        opens_wsol_ata,
        "which the action does not pay into",
    ),
    "close-of-an-empty-position-opens-the-recipients-account": (
        ("close-account", "--asset", "USDC", "--recipient", str(RECIPIENT)),
        lambda c: c.close_account("USDC", recipient=str(RECIPIENT)),
        opens_recipients_account,
        "which the action does not pay into",
    ),
}


def _setup(w, name: str) -> None:
    sa.other_accounts(w)
    if name.startswith("withdraw"):
        assert w.runtime.get_account(sa.WSOL_ATA) is None, "the associated wrapped-SOL account must not exist"
    if name.startswith("close"):
        held = ew.position_of(w, ew.POSITION)
        if held is not None and held.balance:
            take = sp.withdraw(WALLET, USER_ATA, USDC_MINT, DEMO_STRATEGY_ID, sp.WITHDRAW_ALL)
            w.runtime.execute([take], [demo_keypair()])
        assert ew.position_of(w, ew.POSITION).balance == 0


@pytest.mark.parametrize("name, face", [pytest.param(n, f, id=f"{n}-{f}") for n in CASES for f in FACES])
def test_a_lying_simulation_does_not_hide_what_the_instructions_say(world, rpc, name, face):
    from yieldcli.errors import Refused

    args, call, change, reason = CASES[name]
    _setup(world, name)
    lying_doctor(world, rpc, change)
    before, swapped = ew.state(world), rpc.swapped
    if face == "client":
        with world.client(rpc_url=rpc.url) as client, pytest.raises(Refused, match=reason):
            call(client).send(confirm=lambda *a: True)
    else:
        how = ("--send", "--yes") if face == "send" else ("--sign", "--yes")
        refused = world.run(*args, *how, "-o", "json", env={**world.env(), "YIELD_RPC_URL": rpc.url})
        assert refused.code == 10, (refused.code, refused.stderr)
        assert reason in refused.stdout + refused.stderr, refused.stderr
        nothing_signed(refused.json() if refused.stdout.strip() else {})
    assert rpc.swapped > swapped, "the RPC did not lie: the test would not show the static check"
    assert ew.state(world) == before
    assert world.runtime.get_account(Pubkey.from_string(str(_recipient_ata()))) is None


def _recipient_ata() -> Pubkey:
    return programs.associated_token_address(RECIPIENT, USDC_MINT)


def price_without_limit(price: int):
    def change(ixs: list[Instruction]) -> list[Instruction]:
        return [set_compute_unit_price(price), *(ix for ix in ixs if ix.program_id != COMPUTE_BUDGET)]

    return change


def test_a_price_without_a_limit_costs_what_the_chain_takes(world):
    """203,000 units (3,000 for the compute-budget instruction, 200,000 for the strategy's) at 0.4
    lamport each: the fee yield shows, the one it checks, is the wallet's loss on the chain."""
    world.runtime.mint_to(sa.WALLET, USDC_MINT, 3 * sa.USD)
    world.doctor(price_without_limit(400_000))
    start = world.runtime.get_balance(WALLET)
    done = world.yield_("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")
    assert done.code == 0, done.stderr
    fee = done.json()["fee"]
    assert fee["compute_unit_limit"] == 203_000 and fee["priority"] == 81_200
    assert start - world.runtime.get_balance(WALLET) == fee["total"] == 5_000 + 81_200


@pytest.mark.parametrize("max_fee", [None, "105000"])
def test_a_fee_the_rpc_hides_is_counted_from_the_message(world, rpc, max_fee):
    """At 0.5 lamport a unit, the chain takes 101,500 of priority fee (over the 100,000 allowed when the user
    set none; 106,500 in all, over a --max-fee of 105,000); an RPC hiding the 1,500 does not change the count."""
    world.doctor(price_without_limit(500_000))
    rpc.hide = (str(WALLET), 1_500)
    try:
        before = ew.state(world)
        more = ("--max-fee", max_fee) if max_fee else ()
        args = ("deposit", "--asset", "USDC", "--amount", "1", *more, "--send", "--yes", "-o", "json")
        refused = world.run(*args, env={**world.env(), "YIELD_RPC_URL": rpc.url})
    finally:
        rpc.hide = None
    assert refused.code == 10, (refused.code, refused.stderr)
    said = refused.stdout + refused.stderr
    assert ("106500 lamports" in said) if max_fee else ("a priority fee of 0.0001015 SOL" in said), said
    assert ew.state(world) == before
