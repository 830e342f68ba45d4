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
from yieldcli import Confirmed

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)


def test_a_lost_answer_is_not_taken_at_its_word_the_chain_is_asked(sandbox, journal, wallet):
    rpc = _SendAnswersError(sandbox.rpc_url, {"code": -32603, "message": "Internal error"})
    try:
        with writing_client(sandbox, journal, rpc_url=rpc.url) as lossy:
            before = usdc_balance(sandbox)
            outcome = lossy.deposit("USDC", Decimal("1")).send(confirm=Asked(True))
    finally:
        rpc.stop()
    # The node forwarded it, then answered an error: the chain shows it landed, and that is the outcome.
    assert isinstance(outcome, Confirmed) and outcome.result["send_error"]
    assert landed(sandbox, outcome.signature) is not None and before - usdc_balance(sandbox) == 1_000_000
    assert journal_entries(journal) == []  # proven landed and told: settled
    again = wallet.deposit("USDC", Decimal("1")).send(confirm=Asked(True))
    assert isinstance(again, Confirmed) and before - usdc_balance(sandbox) == 2_000_000
