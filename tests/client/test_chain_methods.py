"""`Client.transaction_status` and `Client.create_nonce_account` (and the AsyncClient's, the same
methods awaited) against the sandbox's chain served over loopback: the journal of sent signatures,
the lifetimes, and the one send-and-wait path, for real."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import httpx2
import pytest
from solders.hash import Hash
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from yieldcli import AsyncClient, Client
from yieldcli.chain.keys.sign import sign_transaction
from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.transact.journal import Journal, new_entry
from yieldcli.chain.transact.outcomes import ConfirmationRequired
from yieldcli.chain.tx.instructions import build_transaction
from yieldcli.client import chain_methods
from yieldcli.errors import Declined, Refused, TransactionPending, UsageError
from yieldcli.sandbox.runtime import BLOCKHASH_WINDOW

SOL = 1_000_000_000
RENT = 1_447_680  # of an 80-byte account
RENT_AND_TWO_SIGNATURES = RENT + 10_000


def rpc_call(url: str, method: str, params: list | None = None):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []}
    return httpx2.post(url, json=body, timeout=10).json()["result"]


@pytest.fixture
def payer(sandbox):
    keypair = Keypair()
    sandbox.runtime.airdrop(keypair.pubkey(), 2 * SOL)
    return keypair


@pytest.fixture
def journal(tmp_path):
    return tmp_path / "in-flight.json"


def client(sandbox, journal, keypair=None) -> Client:
    return Client(rpc_url=sandbox.rpc_url, keypair=keypair, journal_path=journal)


def signed_transfer(sandbox, payer: Keypair):
    """A transfer signed now and never sent: (its signature, its last valid block height, its bytes)."""

    async def build():
        async with Rpc(sandbox.rpc_url) as rpc:
            latest = await rpc.latest_blockhash()
            work = transfer(
                TransferParams(from_pubkey=payer.pubkey(), to_pubkey=Keypair().pubkey(), lamports=SOL // 10)
            )
            tx = sign_transaction(build_transaction([work], payer.pubkey(), latest.blockhash), [payer]).transaction
            return str(tx.signatures[0]), latest.last_valid_block_height, tx

    return asyncio.run(build())


# --- transaction_status --------------------------------------------------------------------------


def test_a_signature_sent_from_here_is_pending_until_its_blockhash_passes_then_expired(sandbox, journal, payer):
    signature, last_valid, _ = signed_transfer(sandbox, payer)
    Journal(journal).claim(
        new_entry(signature, sandbox.runtime.genesis_hash, last_valid, "transaction", str(payer.pubkey()))
    )
    with client(sandbox, journal) as yielding:
        pending = yielding.transaction_status(signature)
        assert pending.status == "pending" and not pending.landed
        assert pending.last_valid_block_height == last_valid and 0 < pending.block_height <= last_valid
        assert pending.deadline.startswith(f"until block height {last_valid:,}")
        assert pending.to_dict() == {
            "signature": signature,
            "status": "pending",
            "last_valid_block_height": last_valid,
            "block_height": pending.block_height,
            "nonce_account": None,
            "deadline": pending.deadline,
        }
        assert Journal(journal).find(signature) is not None  # it can still land: kept
        rpc_call(sandbox.rpc_url, "sandbox_advanceSlots", [BLOCKHASH_WINDOW + 50])
        expired = yielding.transaction_status(signature)
    assert expired.to_dict() == {"signature": signature, "status": "expired", "last_valid_block_height": last_valid}
    assert Journal(journal).find(signature) is None  # settled: it can never land


def test_a_landed_signature_is_its_commitment_and_leaves_the_journal(sandbox, journal, payer):
    signature, last_valid, tx = signed_transfer(sandbox, payer)
    Journal(journal).claim(
        new_entry(signature, sandbox.runtime.genesis_hash, last_valid, "transaction", str(payer.pubkey()))
    )

    async def send_then_ask():
        async with Rpc(sandbox.rpc_url) as rpc:
            await rpc.send(tx)
        async with AsyncClient(rpc_url=sandbox.rpc_url, journal_path=journal) as awaiting:
            return await awaiting.transaction_status(signature)

    found = asyncio.run(send_then_ask())
    assert found.landed and found.status in ("confirmed", "finalized") and found.slot > 0
    assert found.to_dict() == {
        "signature": signature,
        "status": found.status,
        "slot": found.slot,
        "explorer": None,  # a loopback cluster no public explorer can show
    }
    assert Journal(journal).find(signature) is None


def test_a_signature_sent_on_another_chain_is_not_judged_by_this_one(sandbox, journal, payer):
    # Recorded on a chain this RPC does not serve (a provider that switched backends, a reset validator):
    # its word proves nothing of it, so nothing is settled and the record stays.
    signature, last_valid, _ = signed_transfer(sandbox, payer)
    Journal(journal).claim(new_entry(signature, "another-genesis", last_valid, "transaction", str(payer.pubkey())))
    rpc_call(sandbox.rpc_url, "sandbox_advanceSlots", [BLOCKHASH_WINDOW + 50])  # here, it would be "expired"
    with client(sandbox, journal) as yielding, pytest.raises(TransactionPending) as stop:
        yielding.transaction_status(signature)
    assert stop.value.kind == "tx.pending.earlier.cluster_changed" and stop.value.signature == signature
    assert Journal(journal).find(signature) is not None


def test_a_signature_never_seen_nor_sent_from_here_is_unknown_and_a_bad_one_is_refused(sandbox, journal, payer):
    signature, _, _ = signed_transfer(sandbox, payer)
    journal.write_text("not json")  # a damaged journal is only no help
    with client(sandbox, journal) as yielding:
        assert yielding.transaction_status(signature).to_dict() == {"signature": signature, "status": "unknown"}
        with pytest.raises(UsageError, match="invalid signature 'nope'"):
            yielding.transaction_status("nope")
    assert journal.read_text() == "not json"


def test_without_an_rpc_there_is_no_status(journal):
    with Client(journal_path=journal) as yielding, pytest.raises(UsageError) as error:
        yielding.transaction_status(str(Keypair().sign_message(b"x")))
    assert error.value.kind == "usage.no_rpc"


# --- create_nonce_account ------------------------------------------------------------------------


class Asked:
    def __init__(self, answer: bool):
        self.answer, self.questions = answer, []

    def __call__(self, question, prepared):
        self.questions.append((question, prepared))
        return self.answer


def test_a_nonce_account_is_created_through_the_one_send_path(sandbox, journal, payer):
    authority, account = Keypair().pubkey(), Keypair()
    asked, sent, waits, details = Asked(True), [], [], []
    with client(sandbox, journal, payer) as yielding:
        created = yielding.create_nonce_account(
            str(authority),
            account=account,
            confirm=asked,
            on_sent=sent.append,
            progress=lambda stage, seen: waits.append(stage),
            log=details.append,
        )
    address = str(account.pubkey())
    # The question names what is created and paid, after the simulation and the check.
    [(question, prepared)] = asked.questions
    assert question == (
        f"Create nonce account {address} on {sandbox.rpc_url}, authority {authority}, "
        f"funded with 1447680 lamports (0.00144768 SOL) by {payer.pubkey()}?"
    )
    assert prepared.result["simulation"]["ok"] and prepared.effect is not None
    # Sent once, told at once, waited for, and its record settled.
    assert sent == [created.signature] and "waiting" in waits and "sent 1 time(s)" in details
    assert Journal(journal).entries() == []
    body = created.to_dict()
    data = bytes(sandbox.runtime.get_account(account.pubkey()).data)
    assert body == {
        "address": address,
        "authority": str(authority),
        "nonce": str(Hash(data[40:72])),
        "lamports_per_signature": 5000,
        "lamports": 1_447_680,
        "signature": created.signature,
        "slot": created.outcome.slot,
        "sends": 1,
    }
    assert created.outcome.result["status"] == "confirmed" and created.keypair == account
    assert sandbox.runtime.get_balance(payer.pubkey()) == 2 * SOL - RENT_AND_TWO_SIGNATURES


def test_nothing_is_signed_without_a_yes(sandbox, journal, payer):
    authority = str(Keypair().pubkey())
    with client(sandbox, journal, payer) as yielding:
        with pytest.raises(ConfirmationRequired):
            yielding.create_nonce_account(authority)
        with pytest.raises(Declined):
            yielding.create_nonce_account(authority, confirm=Asked(False))
        with pytest.raises(UsageError, match="invalid authority"):
            yielding.create_nonce_account("not-a-key", confirm=Asked(True))
    assert sandbox.runtime.get_balance(payer.pubkey()) == 2 * SOL and Journal(journal).entries() == []


def test_an_earlier_send_that_may_still_land_stops_the_creation(sandbox, journal, payer):
    # The creation settles the journal first, as every send does: an earlier transfer of this wallet
    # that can still land is said, and nothing more is sent until its fate is known.
    signature, last_valid, _ = signed_transfer(sandbox, payer)

    async def genesis():
        async with Rpc(sandbox.rpc_url) as rpc:
            return await rpc.genesis_hash()

    Journal(journal).claim(new_entry(signature, asyncio.run(genesis()), last_valid, "transfer", str(payer.pubkey())))
    with client(sandbox, journal, payer) as yielding, pytest.raises(TransactionPending) as earlier:
        yielding.create_nonce_account(str(Keypair().pubkey()), confirm=Asked(True))
    assert earlier.value.kind == "tx.pending.earlier" and earlier.value.signature == signature
    assert sandbox.runtime.get_balance(payer.pubkey()) == 2 * SOL


def test_the_async_client_creates_one_too(sandbox, journal, payer):
    async def create():
        async with AsyncClient(rpc_url=sandbox.rpc_url, keypair=payer, journal_path=journal) as awaiting:
            return await awaiting.create_nonce_account(str(payer.pubkey()), confirm=Asked(True))

    created = asyncio.run(create())
    assert created.account.authority == payer.pubkey()
    assert sandbox.runtime.get_account(created.account.address).owner == Pubkey.from_string("1" * 32)


def test_only_the_message_built_here_with_the_creations_effect_is_signed(sandbox, payer):
    _, _, built = signed_transfer(sandbox, payer)
    _, _, other = signed_transfer(sandbox, payer)  # another recipient: another message
    wallet, address = str(payer.pubkey()), str(built.message.account_keys[1])

    def prepared(transaction=built, priority_fee=0, changes=None):
        changes = {wallet: -(RENT + 5000), address: RENT} if changes is None else changes
        accounts = [{"address": a, "lamports_change": change} for a, change in changes.items()]
        return SimpleNamespace(
            transaction=transaction,
            fees=SimpleNamespace(priority_fee=priority_fee, total=5000),
            effect=SimpleNamespace(observed={"accounts": accounts}),
        )

    chain_methods._check_creation(prepared(), built, RENT, address)
    for wrong in (
        prepared(transaction=other),  # not the message built here
        prepared(priority_fee=1),  # a priority fee nobody asked for
        prepared(changes={wallet: -(RENT + 5000) - 1, address: RENT + 1}),  # more than the rent taken
        prepared(changes={wallet: -(RENT + 5000), address: RENT, str(Keypair().pubkey()): 1}),  # another account
    ):
        with pytest.raises(Refused) as refused:
            chain_methods._check_creation(wrong, built, RENT, address)
        assert refused.value.kind == "refused.mismatch.nonce"
