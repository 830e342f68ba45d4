"""A deposit from Python, in-process, against the sandbox's service and its real Solana runtime.

Each test is something a library user does: prepare, look at the effect, send with a confirm
callback (or without one, or answering no), and meet a service that lies and a transaction that
landed before. The transactions execute on LiteSVM behind the sandbox's JSON-RPC on loopback.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from tests.cli.commands.test_write_intent import amount_changed
from tests.cli.stand_in import StandIn, decompile, recompile
from tests.conftest import writing_client
from tests.library.wallet import Asked, async_wallet, journal_entries, landed, usdc_balance
from yieldcli import ConfirmationRequired, Confirmed, Declined, Refused, SentThenInterrupted
from yieldcli.sandbox.demo import DEMO_WALLET

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)


def test_a_deposit_is_prepared_checked_sent_and_confirmed(wallet, sandbox, journal):
    before = usdc_balance(sandbox)
    prepared = wallet.deposit("USDC", Decimal("1.5"))
    assert prepared.effect is not None and prepared.effect.ok
    assert prepared.effect.summary.startswith("deposit 1.5 USDC from 5PJ1")
    assert prepared.review.fee_payer == DEMO_WALLET
    asked = Asked(True)
    outcome = prepared.send(confirm=asked)
    assert isinstance(outcome, Confirmed) and outcome.status == "confirmed"
    assert len(asked.questions) == 1 and asked.effects[0].ok
    assert asked.questions[0].startswith("Sign and send this deposit? (valid for about ")
    assert landed(sandbox, outcome.signature).err is None
    assert before - usdc_balance(sandbox) == 1_500_000  # exactly 1.5 USDC, in base units
    assert journal_entries(journal) == []  # settled: nothing left in flight


def test_raw_base_units_are_exact(wallet):
    prepared = wallet.deposit("USDC", raw=1)
    assert prepared.effect.ok and "deposit 0.000001 USDC" in prepared.effect.summary


@pytest.mark.parametrize(
    "amount, summary",
    [
        (Decimal("1E+1"), "deposit 10 USDC"),
        (Decimal("5E-6"), "deposit 0.000005 USDC"),
        ("2.50", "deposit 2.5 USDC"),
        (3, "deposit 3 USDC"),
    ],
)
def test_token_units_in_any_exact_spelling(wallet, amount, summary):
    assert wallet.deposit("USDC", amount).effect.summary.startswith(summary)


@pytest.mark.parametrize("amount", [Decimal("1E-7"), Decimal("NaN"), "-1", "0"])
def test_amounts_a_token_cannot_hold_are_refused_before_any_request(wallet, amount):
    from yieldcli import UsageError

    with pytest.raises(UsageError):
        wallet.deposit("USDC", amount)


def test_a_float_amount_is_refused(wallet):
    from yieldcli import UsageError

    with pytest.raises(UsageError, match="never a float"):
        wallet.deposit("USDC", 1.5)


def test_without_a_confirm_callback_nothing_is_signed(wallet, sandbox, journal):
    prepared = wallet.deposit("USDC", Decimal("1"))
    before = usdc_balance(sandbox)
    with pytest.raises(ConfirmationRequired) as refused:
        prepared.send()
    assert refused.value.exit_code == 12 and "--" not in refused.value.message
    with pytest.raises(ConfirmationRequired):
        prepared.sign()
    assert usdc_balance(sandbox) == before and journal_entries(journal) == []


def test_answering_no_signs_nothing(wallet, sandbox, journal):
    prepared = wallet.deposit("USDC", Decimal("1"))
    before = usdc_balance(sandbox)
    with pytest.raises(Declined, match="nothing was signed"):
        prepared.send(confirm=Asked(False))
    assert usdc_balance(sandbox) == before and journal_entries(journal) == []


def test_a_doctored_transaction_is_refused_before_the_question(sandbox, journal):
    stand_in = StandIn(sandbox.url)
    table = sandbox.chain.lookup_table.key
    tables = {table: sandbox.runtime.lookup_table_addresses(table)}
    stand_in.doctor = lambda tx: recompile(tx, amount_changed(decompile(tx, tables)), tables)
    try:
        with writing_client(sandbox, journal, api_url=stand_in.url) as doctored:
            before = usdc_balance(sandbox)
            prepared = doctored.deposit("USDC", Decimal("10"))
            assert not prepared.effect.ok and prepared.effect.differences
            asked = Asked(True)
            with pytest.raises(Refused) as refused:
                prepared.send(confirm=asked)
    finally:
        stand_in.stop()
    assert refused.value.kind == "refused.mismatch" and refused.value.report["status"] == "refused"
    assert asked.questions == []  # refused before anyone is asked
    assert usdc_balance(sandbox) == before and journal_entries(journal) == []


def test_a_transaction_that_landed_before_is_confirmed_once(wallet, sandbox, journal):
    """Signed here, sent by someone else: the send meets AlreadyProcessed and reports the landing."""
    from yieldcli.chain.rpc.adapter import Rpc
    from yieldcli.chain.tx.decode import decode_transaction

    prepared = wallet.deposit("USDC", Decimal("2"))
    signed = prepared.sign(confirm=Asked(True))
    assert signed.complete and signed.status == "signed"

    async def send_elsewhere():
        async with Rpc(sandbox.rpc_url) as rpc:
            await rpc.send(decode_transaction(signed.transaction))

    asyncio.run(send_elsewhere())
    before = usdc_balance(sandbox)
    outcome = prepared.send(confirm=Asked(True))
    assert isinstance(outcome, Confirmed) and outcome.already_processed
    assert outcome.signature == signed.signature  # the same signature: never a second transaction
    assert usdc_balance(sandbox) == before and journal_entries(journal) == []


def test_instructions_come_with_the_services_answer(wallet):
    prepared = wallet.deposit("USDC", Decimal("1"), ix=True)
    answer = prepared.result["service_answer"]
    assert "deposit_instructions" in answer and "lookup_table" in answer
    assert prepared.effect.ok


def test_a_priority_fee_is_in_the_fee_and_the_transaction(wallet):
    plain = wallet.deposit("USDC", "1")
    priced = wallet.deposit("USDC", "1", priority_fee="1000000")  # 1 lamport per compute unit
    assert plain.fee.priority_fee == 0
    assert priced.fee.priority_fee == priced.fee.unit_limit and priced.fee.unit_price == 1_000_000
    assert wallet.deposit("USDC", "1", priority_fee=1_000_000).fee.priority_fee == priced.fee.priority_fee
    assert priced.result["fee"]["total"] == priced.fee.base_fee + priced.fee.priority_fee


def test_an_unknown_mint_s_decimals_come_from_its_mint_account(wallet, sandbox, journal):
    """Client and AsyncClient read them from the chain (3 here), not from the service."""
    from solders.account import Account
    from solders.keypair import Keypair
    from solders.pubkey import Pubkey

    from yieldcli import UsageError
    from yieldcli.solana.programs import TOKEN_PROGRAM

    mint = Keypair().pubkey()
    data = bytearray(82)
    data[44], data[45] = 3, 1  # decimals, initialized
    sandbox.runtime.set_account(
        mint, Account(lamports=1_461_600, data=bytes(data), owner=Pubkey.from_string(TOKEN_PROGRAM), executable=False)
    )
    with pytest.raises(UsageError, match="has 4 fraction digits but the token has 3 decimals"):
        wallet.deposit(str(mint), Decimal("1.5555"))

    async def main() -> None:
        async with async_wallet(sandbox, journal) as client:
            await client.deposit(str(mint), Decimal("1.5555"))

    with pytest.raises(UsageError, match="the token has 3 decimals"):
        asyncio.run(main())
    with pytest.raises(UsageError, match="is not a token mint on the RPC"):
        wallet.deposit(str(Keypair().pubkey()), Decimal("1"))


def test_a_send_interrupted_before_its_outcome_is_returned_keeps_its_record(wallet, sandbox, journal, monkeypatch):
    # Ctrl-C just as the RPC connection closes, after the deposit landed and before `send` returned:
    # the caller never holds the outcome, so the journal keeps the record and the next send says so.
    from yieldcli.chain.rpc.adapter import Rpc

    close = Rpc.close

    async def close_then_ctrl_c(self):
        await close(self)
        raise KeyboardInterrupt

    before = usdc_balance(sandbox)
    prepared = wallet.deposit("USDC", Decimal("1"))
    monkeypatch.setattr(Rpc, "close", close_then_ctrl_c)
    with pytest.raises(SentThenInterrupted) as interrupted:  # never a bare KeyboardInterrupt: it names the send
        prepared.send(confirm=Asked(True))
    monkeypatch.undo()
    assert interrupted.value.signature == journal_entries(journal)[0].signature
    assert before - usdc_balance(sandbox) == 1_000_000 and len(journal_entries(journal)) == 1
    with pytest.raises(Refused, match="landed"):
        wallet.deposit("USDC", Decimal("1")).send(confirm=Asked(True))
    assert before - usdc_balance(sandbox) == 1_000_000  # no second deposit
