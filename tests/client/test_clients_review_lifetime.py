"""The review's lifetime through the Python client, against the sandbox served over loopback: the
question `confirm` is given says how long the transaction stays valid; a yes after its blockhash
passed (the sandbox's slots moved on between `deposit(...)` and `.send(...)`) never signs it. A
deposit is built again and `confirm` is asked once more; a transaction handed over raises
`ReviewExpired`."""

from __future__ import annotations

import base64
from decimal import Decimal

import pytest

from tests.library.wallet import journal_entries, usdc_balance
from yieldcli import Confirmed, Declined, ReviewExpired, TransactionExpired


def _past_its_blockhash(sandbox) -> None:
    sandbox.runtime.advance_slots(sandbox.runtime.blockhash_window + 2)


def test_a_deposit_whose_blockhash_passed_is_built_again_and_asked_once_more(wallet, sandbox, journal):
    before = usdc_balance(sandbox)
    prepared = wallet.deposit("USDC", Decimal("1"))
    first = bytes(prepared.transaction)
    _past_its_blockhash(sandbox)
    asked: list[tuple[str, bytes]] = []

    def confirm(text, review):
        asked.append((text, bytes(review.transaction)))
        return True

    outcome = prepared.send(confirm=confirm)
    assert isinstance(outcome, Confirmed), outcome.result
    assert len(asked) == 2
    assert asked[0][0] == "Sign and send this deposit? (valid for about 0 s)"
    assert asked[1][0].startswith("It expired while it was reviewed; built again, it does the same.\nSign and send")
    assert asked[0][1] == first and asked[1][1] != first  # asked of each transaction, the new one signed
    assert before - usdc_balance(sandbox) == 1_000_000  # one landing
    assert journal_entries(journal) == []


def test_a_no_to_the_deposit_built_again_signs_nothing(wallet, sandbox):
    before = usdc_balance(sandbox)
    prepared = wallet.deposit("USDC", Decimal("1"))
    _past_its_blockhash(sandbox)
    answers = iter([True, False])
    with pytest.raises(Declined):
        prepared.send(confirm=lambda text, review: next(answers))
    assert usdc_balance(sandbox) == before


def test_a_transaction_handed_over_whose_blockhash_passed_raises_review_expired(wallet, sandbox):
    before = usdc_balance(sandbox)
    built = wallet.deposit("USDC", Decimal("1")).transaction
    prepared = wallet.prepare_transaction(base64.b64encode(bytes(built)).decode(), "deposit", asset="USDC", amount="1")
    _past_its_blockhash(sandbox)
    with pytest.raises(ReviewExpired) as expired:
        prepared.send(confirm=lambda text, review: True)
    error = expired.value
    assert isinstance(error, TransactionExpired) and error.kind == "tx.expired.review" and error.exit_code == 9
    assert error.block_height > error.last_valid_block_height
    assert "passed while it was reviewed" in error.message and "nothing was signed" in error.message
    assert usdc_balance(sandbox) == before


def _advance_nonce(sandbox, nonce: str) -> None:
    """Move the durable nonce on (its authority, the demo wallet, advances it) on the sandbox's chain."""
    from solders.hash import Hash
    from solders.message import MessageV0
    from solders.pubkey import Pubkey
    from solders.system_program import AdvanceNonceAccountParams, advance_nonce_account
    from solders.transaction import VersionedTransaction

    from yieldcli.sandbox.demo import demo_keypair

    authority = demo_keypair()
    advance = advance_nonce_account(
        AdvanceNonceAccountParams(nonce_pubkey=Pubkey.from_string(nonce), authorized_pubkey=authority.pubkey())
    )
    blockhash, _ = sandbox.runtime.latest_blockhash()
    message = MessageV0.try_compile(authority.pubkey(), [advance], [], Hash.from_string(blockhash))
    sandbox.runtime.advance_slots(1)  # the nonce takes a newer blockhash than the one it holds
    assert sandbox.runtime.send_transaction(VersionedTransaction(message, [authority])).record is not None


def test_a_deposit_whose_durable_nonce_moved_on_during_the_review_is_built_again_on_its_new_value(
    wallet, sandbox, chain
):
    created = chain("nonce", "create", "--authority", str(wallet_pubkey()), "--yes", "-o", "json")
    assert created.code == 0, created.stderr
    nonce = created.json()["address"]
    before = usdc_balance(sandbox)
    prepared = wallet.deposit("USDC", Decimal("1"), nonce=nonce)
    asked: list[str] = []

    def confirm(text, review):
        asked.append(text)
        if len(asked) == 1:
            _advance_nonce(sandbox, nonce)  # another use of the nonce while the person reads
        return True

    outcome = prepared.send(confirm=confirm)
    assert isinstance(outcome, Confirmed), outcome.result
    assert asked[0] == "Sign and send this deposit? (valid until its durable nonce moves on)"
    assert asked[1].startswith("It expired while it was reviewed; built again, it does the same.\n")
    assert len(asked) == 2 and before - usdc_balance(sandbox) == 1_000_000


def wallet_pubkey():
    from yieldcli.sandbox.demo import demo_keypair

    return demo_keypair().pubkey()
