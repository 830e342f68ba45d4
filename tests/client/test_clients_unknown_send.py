"""A send whose answer is lost: the signature is never lost, and no second deposit goes out unasked.

The RPC in front of the sandbox's lands each transaction, then answers the send with an internal
error (as a node can): a real RPC does not do this on demand, so this is the one stand-in.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.cli.commands.test_write_journal import _SendAnswersError
from tests.conftest import writing_client
from tests.library.wallet import Asked, journal_entries, landed, usdc_balance
from yieldcli import Confirmed, Refused, TransactionPending

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)


def test_a_lost_answer_keeps_the_signature_and_holds_the_next_deposit(sandbox, journal, wallet):
    rpc = _SendAnswersError(sandbox.rpc_url, {"code": -32603, "message": "Internal error"})
    try:
        with writing_client(sandbox, journal, rpc_url=rpc.url) as lossy:
            before = usdc_balance(sandbox)
            with pytest.raises(TransactionPending) as unknown:
                lossy.deposit("USDC", Decimal("1")).send(confirm=Asked(True))
    finally:
        rpc.stop()
    signature = unknown.value.signature
    assert unknown.value.kind == "tx.pending.unknown" and unknown.value.report["status"] == "pending"
    assert "may or may not have been received" in unknown.value.message and "yield" not in unknown.value.message
    assert [entry.signature for entry in journal_entries(journal)] == [signature]  # kept until settled
    assert landed(sandbox, signature) is not None and before - usdc_balance(sandbox) == 1_000_000

    # The next deposit learns the first one landed, and does not go out unless asked to send again.
    with pytest.raises(Refused) as held:
        wallet.deposit("USDC", Decimal("1")).send(confirm=Asked(True))
    assert held.value.kind == "refused.landed_before" and signature in held.value.message
    assert before - usdc_balance(sandbox) == 1_000_000
    again = wallet.deposit("USDC", Decimal("1")).send(confirm=Asked(True), again=True)
    assert isinstance(again, Confirmed) and before - usdc_balance(sandbox) == 2_000_000
    assert journal_entries(journal) == []
