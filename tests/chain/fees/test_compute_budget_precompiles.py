"""Every lamport of fee as the network counts it (issue 35): the signatures a precompile instruction
declares are charged as the message's own. The count from the message is checked against what the
real runtime (LiteSVM) takes from the payer and what the sandbox's getFeeForMessage answers."""

from __future__ import annotations

import pytest
from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price
from solders.keypair import Keypair
from solders.litesvm import LiteSVM
from solders.message import MessageV0
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from tests.guard.precompiles import ed25519_verify, precompiles, secp256k1_declaring, secp256r1_verify
from yieldcli.chain.fees import compute_budget as cb
from yieldcli.chain.tx.state import network_fee, signature_fee
from yieldcli.errors import Refused
from yieldcli.sandbox.chain.records import fee_for


def _message(svm: LiteSVM, payer: Keypair, *extra):  # noqa: ANN002, ANN202
    pay = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=Keypair().pubkey(), lamports=1_000_000))
    budget = [set_compute_unit_limit(10_000), set_compute_unit_price(1_000_000)]  # 10,000 lamports of priority
    return MessageV0.try_compile(payer.pubkey(), [*budget, pay, *extra], [], svm.latest_blockhash())


@pytest.mark.parametrize(
    ("extra", "declared"),
    [
        ((), 0),
        ((ed25519_verify(52),), 52),
        (tuple(precompiles(secp256r1_verify, 20)), 20),
        ((ed25519_verify(3), secp256r1_verify(8)), 11),
    ],
    ids=["none", "ed25519x52", "secp256r1x20", "both"],
)
def test_the_fee_counted_from_the_message_is_what_the_runtime_takes(extra, declared):
    svm, payer = LiteSVM(), Keypair()
    svm.airdrop(payer.pubkey(), 10**9)
    message = _message(svm, payer, *extra)
    fees = cb.fee_summary(message)
    assert (fees.signatures, fees.precompile_signatures) == (1, declared)
    assert (fees.base_fee, fees.precompile_fee, fees.priority_fee) == (5_000, declared * 5_000, 10_000)
    assert fees.total == 5_000 * (1 + declared) + 10_000 == network_fee(message) == fee_for(message)
    assert signature_fee(message) == 5_000 * (1 + declared)
    shown = fees.to_dict()
    assert (shown["precompile_signatures"], shown["precompile_fee"], shown["total"]) == (
        declared,
        declared * 5_000,
        fees.total,
    )
    before = svm.get_balance(payer.pubkey())
    landed = svm.send_transaction(VersionedTransaction(message, [payer]))
    assert type(landed).__name__ == "TransactionMetadata", landed
    # The chain's word: the payer's balance falls by the fee and the lamports sent, nothing else.
    assert before - svm.get_balance(payer.pubkey()) == fees.total + 1_000_000


def test_a_precompile_that_fails_is_charged_all_the_same_and_secp256k1_counts_by_its_first_byte():
    svm, payer = LiteSVM(), Keypair()
    svm.airdrop(payer.pubkey(), 10**9)
    message = _message(svm, payer, secp256k1_declaring(4))
    assert cb.fee_summary(message).precompile_signatures == 4
    before = svm.get_balance(payer.pubkey())
    failed = svm.send_transaction(VersionedTransaction(message, [payer]))
    assert type(failed).__name__ == "FailedTransactionMetadata"
    assert before - svm.get_balance(payer.pubkey()) == 5_000 * 5 + 10_000 == cb.fee_summary(message).total


def test_max_fee_binds_the_total_with_the_precompile_signatures():
    svm, payer = LiteSVM(), Keypair()
    fees = cb.fee_summary(_message(svm, payer, ed25519_verify(52)))
    cb.check_max_fee(fees, fees.total)
    with pytest.raises(Refused, match=r"base 5000 \+ precompile signatures 260000 \+ priority 10000") as refused:
        cb.check_max_fee(fees, 20_000)
    assert refused.value.kind == "refused.fee.max"
