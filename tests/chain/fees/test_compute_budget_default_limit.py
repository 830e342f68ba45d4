"""The compute-unit limit of a transaction that sets a price and no limit, as the runtime counts it (issue
35): 3,000 units per instruction of a builtin program (the compute-budget program's own included), 200,000
per other one, at most 1.4M. Each count is checked against what the real runtime (LiteSVM) takes from the
payer: the fee summary, the guard's network fee and the sandbox's getFeeForMessage all say it."""

from __future__ import annotations

import pytest
from solders.compute_budget import set_compute_unit_price
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.litesvm import LiteSVM
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from yieldcli.chain.fees import compute_budget as cb
from yieldcli.chain.tx.state import network_fee
from yieldcli.sandbox.chain.records import fee_for
from yieldcli.solana import programs
from yieldcli.solana.compute_units import VOTE_PROGRAM

PRICE = 1_000_000  # one lamport per unit: the priority fee is the limit


def _charged(*programs_called: str) -> tuple[MessageV0, int]:
    """A message of a price and one instruction (data that declares no signature) per program, and what the
    runtime took from its payer for it."""
    svm, payer = LiteSVM(), Keypair()
    svm.airdrop(payer.pubkey(), 10**10)
    calls = [Instruction(Pubkey.from_string(p), bytes(2), []) for p in programs_called]
    message = MessageV0.try_compile(payer.pubkey(), [set_compute_unit_price(PRICE), *calls], [], svm.latest_blockhash())
    before = svm.get_balance(payer.pubkey())
    svm.send_transaction(VersionedTransaction(message, [payer]))
    return message, before - svm.get_balance(payer.pubkey())


@pytest.mark.parametrize(
    ("called", "units"),
    [
        ((), 3_000),  # the compute-budget instruction alone
        ((programs.MEMO_PROGRAM,), 203_000),
        ((programs.SYSTEM_PROGRAM,), 6_000),
        ((programs.TOKEN_PROGRAM, programs.SYSTEM_PROGRAM), 206_000),
        (("Stake11111111111111111111111111111111111111",), 203_000),  # migrated: no longer a builtin
        ((programs.ADDRESS_LOOKUP_TABLE_PROGRAM,), 203_000),  # migrated too
        (("BPFLoaderUpgradeab1e11111111111111111111111",), 6_000),
        (("Ed25519SigVerify111111111111111111111111111",), 6_000),  # a precompile that is a builtin
        (("KeccakSecp256k11111111111111111111111111111",), 6_000),
        (("Secp256r1SigVerify1111111111111111111111111",), 203_000),  # a precompile that is not
        ((programs.MEMO_PROGRAM,) * 8, 1_400_000),  # at most 1.4M
    ],
    ids=[
        "budget-only",
        "memo",
        "system",
        "token+system",
        "stake",
        "lookup-table",
        "loader",
        "ed25519",
        "secp256k1",
        "secp256r1",
        "capped",
    ],
)
def test_the_default_limit_is_what_the_runtime_charges(called, units):
    message, charged = _charged(*called)
    fees = cb.fee_summary(message)
    assert fees.unit_limit == units
    assert charged == 5_000 + units == fees.total == network_fee(message) == fee_for(message)


def test_the_sandboxs_fee_for_a_vote_instruction_is_what_its_runtime_charges():
    """agave counts the vote program a builtin (3,000); the runtime the sandbox runs does not (200,000). The
    sandbox says what it charges, and the guard, counting less, refuses its answer as more than the count."""
    message, charged = _charged(VOTE_PROGRAM)
    assert charged == fee_for(message) == 5_000 + 203_000
    assert cb.fee_summary(message).total == 5_000 + 6_000
