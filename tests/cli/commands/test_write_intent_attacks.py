"""Hostile transactions the guard must refuse by what the chain says, not by their shape.

A stand-in service doctors the sandbox's own answers on every write path (deposit, withdraw, close)
and hostile transactions are handed to `tx sign/send --expect`; through `yield` and through the Python
client with a confirm callback that always says yes. Each is refused before any signature (exit 10,
11 when the simulation fails) and the chain does not change. The legitimate flows still confirm.
"""

from __future__ import annotations

import struct

import pytest
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import AllocateParams, AssignParams, TransferParams, allocate, assign, transfer

from tests.cli.commands.test_write_intent import _token_ix, destination_swapped
from tests.cli.stand_in import TOKEN, USDC_MINT, USER_ATA, WALLET
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID
from yieldcli.solana import programs, strategy_program

SYSTEM = Pubkey.from_string(programs.SYSTEM_PROGRAM)
STAKE = Pubkey.from_string("Stake11111111111111111111111111111111111111")
POSITION = strategy_program.position_address(WALLET, DEMO_STRATEGY_ID, USDC_MINT)


def pda_owned_account(w):
    """A USDC account whose owner is a program-derived address of another program (looks like a vault)."""
    owner = Pubkey.find_program_address([b"vault"], STAKE)[0]
    return w.runtime.create_associated_token_account(owner, USDC_MINT)


def to_pda_vault(w):
    return destination_swapped(pda_owned_account(w))


def append(make):
    return lambda w: lambda ixs: ixs + [make(w)]


ASSIGN = append(lambda w: assign(AssignParams(pubkey=WALLET, owner=STAKE)))
ALLOCATE = append(lambda w: allocate(AllocateParams(pubkey=WALLET, space=8)))
STRANGER_RENT = append(lambda w: programs.create_associated_token_account(WALLET, w.new_account.pubkey(), USDC_MINT))
SET_POSITION_CLOSE = append(
    lambda w: Instruction(
        TOKEN,
        bytes([6, 3, 1]) + bytes(w.stranger),
        [AccountMeta(USER_ATA, False, True), AccountMeta(WALLET, True, False)],
    )
)
UNKNOWN_PROGRAM = append(lambda w: Instruction(STAKE, struct.pack("<I", 13), [AccountMeta(USER_ATA, False, True)]))
REVOKE = append(
    lambda w: Instruction(TOKEN, bytes([5]), [AccountMeta(USER_ATA, False, True), AccountMeta(WALLET, True, False)])
)


def close_position_to_stranger(w):
    return lambda ixs: ixs + [strategy_program.close(WALLET, w.stranger_ata, USDC_MINT, POSITION)]


def payout_to_stranger(w):
    """The close's remainder paid to a stranger's account instead of the user's."""

    def change(ixs):
        i = _token_ix(ixs)
        metas = list(ixs[i].accounts)
        metas[1] = AccountMeta(w.stranger_ata, False, True)
        ixs[i] = Instruction(ixs[i].program_id, bytes(ixs[i].data), metas)
        return ixs

    return change


def forward_unwrapped(w):
    return lambda ixs: ixs + [transfer(TransferParams(from_pubkey=WALLET, to_pubkey=w.stranger, lamports=100_000_000))]


DEPOSIT = ("deposit", "--asset", "USDC", "--amount", "10")
ATTACKS = {
    # name: (command, doctor, exit code, what the refusal says)
    "deposit into a PDA-owned account of another program": (
        DEPOSIT,
        to_pda_vault,
        10,
        "Token TransferChecked from your account",
    ),
    "System Assign of the wallet": (DEPOSIT, ASSIGN, 10, "System Assign of your wallet"),
    "System Allocate on the wallet": (DEPOSIT, ALLOCATE, 10, "System Allocate of your wallet"),
    "an account for a stranger paid by the user": (
        DEPOSIT,
        STRANGER_RENT,
        10,
        "ATA CreateIdempotent of a token account for",
    ),
    "SetAuthority close on the user's account": (DEPOSIT, SET_POSITION_CLOSE, 10, "Token SetAuthority of your account"),
    "a program with no business, given the user's account": (
        DEPOSIT,
        UNKNOWN_PROGRAM,
        10,
        "is not one this request needs",
    ),
    "a Token kind the action does not need (Revoke)": (DEPOSIT, REVOKE, 10, "Token Revoke of your account"),
    "withdraw, and close the position to a stranger": (
        ("withdraw", "--asset", "USDC", "--amount", "5"),
        close_position_to_stranger,
        10,
        "the strategy's close, which a withdraw does not need",
    ),
    "withdraw --all, and SOL to a stranger": (
        ("withdraw", "--asset", "USDC", "--all"),
        forward_unwrapped,
        10,
        "System Transfer of 0.1 SOL",
    ),
    "withdraw --exclude-fees with the unwrapped SOL forwarded": (
        ("withdraw", "--asset", "USDC", "--amount", "5", "--exclude-fees"),
        forward_unwrapped,
        10,
        "System Transfer of 0.1 SOL",
    ),
    "withdraw SOL --unwrap-wsol, the SOL forwarded to a stranger": (
        ("withdraw", "--asset", "SOL", "--amount", "0.2", "--unwrap-wsol"),
        forward_unwrapped,
        10,
        "System Transfer of 0.1 SOL",
    ),
    "close, the remainder paid to a stranger": (
        ("close-account", "--asset", "USDC"),
        payout_to_stranger,
        10,
        "the strategy's close names the recipient",
    ),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_each_attack_is_refused_before_signing_and_the_chain_is_unchanged(world, name, record_property):
    command, make, code, message = ATTACKS[name]
    world.new_account = Keypair()
    if "SOL" in command:
        assert world.yield_("deposit", "--asset", "SOL", "--amount", "0.5", "--send", "--yes").code == 0
    world.doctor(make(world))
    before = world.snapshot()
    refused = world.yield_(*command, "--send", "--yes", "-o", "json")
    record_property(
        "outcome", f"exit {refused.code}: {refused.stderr.splitlines()[0] if refused.stderr else ''}"
    )  # for the attack table
    assert refused.code == code, refused.stderr
    assert message in refused.stderr, refused.stderr
    assert "signature" not in refused.json()
    assert world.snapshot() == before


def test_verdicts_are_in_the_json_and_the_review(world):
    world.doctor(ASSIGN(world))
    shown = world.yield_(*DEPOSIT, "-o", "json").json()
    verdicts = shown["effect"]["instructions"]
    assert [v["kind"] for v in verdicts] == ["Compute Budget", "strategy deposit", "System Assign"]
    assert [v["ok"] for v in verdicts] == [True, True, False]
    assert verdicts[2]["reason"] == "instruction 3: System Assign of your wallet"
    assert any("pinned for this cluster" in fact for fact in shown["effect"]["verified"])
    table = world.yield_(*DEPOSIT, "-o", "table")
    assert "      ✗ System Assign of your wallet" in table.stdout, table.stdout
    assert "✓ the strategy's deposit of strategy sandbox-0000-4000-8000-000000000001" in table.stdout


def test_the_python_client_with_an_always_yes_confirm_is_refused(world):
    from yieldcli.errors import Refused

    world.new_account = Keypair()
    before = world.snapshot()
    for make, message in ((ASSIGN, "System Assign of your wallet"), (UNKNOWN_PROGRAM, "is not one this request needs")):
        world.doctor(make(world))
        with (
            world.client() as client,
            pytest.raises(Refused, match=message),
        ):
            client.deposit("USDC", "10").send(confirm=lambda *a: True)
    assert world.snapshot() == before


def test_tx_sign_and_send_refuse_hostile_transactions_and_a_failing_simulation(world, tmp_path):
    for make, message in (
        (ASSIGN, "System Assign of your wallet"),
        (to_pda_vault, "Token TransferChecked from your account"),
    ):
        world.doctor(make(world))
        saved = tmp_path / "hostile.json"
        saved.write_text(world.yield_(*DEPOSIT, "-o", "json").stdout)
        before = world.snapshot()
        for command in ("sign", "send"):
            refused = world.yield_(
                "tx", command, str(saved), "--expect", "deposit:USDC:10", *(["--yes"] if command == "send" else [])
            )
            assert refused.code == 10 and message in refused.stderr, refused.stderr
        assert world.snapshot() == before
    world.doctor(
        lambda ixs: ixs + [transfer(TransferParams(from_pubkey=WALLET, to_pubkey=world.stranger, lamports=10**18))]
    )
    failing = tmp_path / "failing.json"
    failing.write_text(world.yield_(*DEPOSIT, "-o", "json").stdout)
    for command in ("sign", "send"):
        failed = world.yield_(
            "tx",
            command,
            str(failing),
            "--expect",
            "deposit:USDC:10",
            *(["--yes"] if command == "send" else []),
            "-o",
            "json",
        )
        assert failed.code == 11 and "simulation failed" in failed.stderr, failed.stderr
        assert "signature" not in failed.json() or not failed.json().get("signature")


FLOWS = [
    ("deposit", "--asset", "USDC", "--amount", "10"),
    ("deposit", "--asset", "USDC", "--all"),
    ("deposit", "--asset", "SOL", "--amount", "0.5"),
    ("withdraw", "--asset", "USDC", "--amount", "5"),
    ("withdraw", "--asset", "USDC", "--amount", "5", "--exclude-fees"),
    ("withdraw", "--asset", "SOL", "--amount", "0.2", "--unwrap-wsol"),
    ("withdraw", "--asset", "USDC", "--all"),
    ("close-account", "--asset", "USDC"),
]


@pytest.mark.parametrize("priority", [(), ("--priority-fee", "auto")], ids=["no-priority", "priority-auto"])
def test_the_legitimate_flows_confirm(world, priority):
    for flow in FLOWS:
        done = world.yield_(*flow, *priority, "--send", "--yes", "-o", "json")
        assert done.code == 0, (flow, done.stderr)
        effect = done.json()["effect"]
        assert done.json()["status"] == "confirmed" and effect["differences"] == [], (flow, effect)
        assert all(v["ok"] for v in effect["instructions"]), (flow, effect["instructions"])


def test_close_pays_the_remainder_to_the_recipient_named_and_to_no_one_else(world):
    named = Keypair().pubkey()
    world.doctor(payout_to_stranger(world))
    before = world.snapshot()
    refused = world.yield_("close-account", "--asset", "USDC", "--recipient", str(named), "--send", "--yes")
    assert refused.code == 10 and "not the recipient" in refused.stderr, refused.stderr
    assert world.snapshot() == before
    world.stand_in.doctor = None
    done = world.yield_("close-account", "--asset", "USDC", "--recipient", str(named), "--send", "--yes", "-o", "json")
    assert done.code == 0 and done.json()["effect"]["differences"] == [], done.stderr
    assert world.runtime.token_account(programs.associated_token_address(named, USDC_MINT))[2] > 0


def test_a_strategy_program_named_for_another_deployment_is_the_only_one_trusted(world):
    from yieldcli.errors import Refused

    other = str(Keypair().pubkey())
    # The command line: the setting replaces the sandbox's program, whose deposit then uses the user's
    # authority unvouched.
    refused = world.run(*DEPOSIT, "--send", "--yes", env={**world.env(), "YIELD_STRATEGY_PROGRAM": other})
    assert refused.code == 10 and "Sandbox strategy program is not one this request needs" in refused.stderr, (
        refused.stderr
    )
    # The Python client: the same per write.
    with world.client() as client:
        with pytest.raises(Refused, match="Sandbox strategy program is not one this request needs"):
            client.deposit("USDC", "10", strategy_program=other).send(confirm=lambda *a: True)
        assert client.deposit("USDC", "10").send(confirm=lambda *a: True).status == "confirmed"
