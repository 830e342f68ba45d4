"""Settling the journal before a send, against the sandbox's real JSON-RPC server over loopback."""

import asyncio

import pytest
from solders.keypair import Keypair
from solders.signature import Signature

from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.transact.journal import Journal, new_entry, rpc_key
from yieldcli.chain.transact.settle import settle
from yieldcli.errors import TransactionPending
from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.runtime import BLOCKHASH_WINDOW, Runtime
from yieldcli.solana.cluster import GENESIS_HASHES

W = str(Keypair().pubkey())  # the wallet the records are for
DEVNET = GENESIS_HASHES["devnet"]


def test_settling_sorts_earlier_entries_and_keeps_the_landed_until_acknowledged(tmp_path):
    runtime = Runtime(tmp_path / "chain.json")
    G = runtime.genesis_hash
    with RpcServer(runtime) as server:
        height = runtime.advance_slots(10)
        landed = runtime.airdrop(Keypair().pubkey(), 1_000_000)
        pending, expired, elsewhere = (str(Signature.new_unique()) for _ in range(3))
        journal = Journal(tmp_path / "in-flight.json")
        journal.add(new_entry(landed, G, height + 100, "deposit", W))
        journal.add(new_entry(pending, G, height + 100, "deposit", W))
        journal.add(new_entry(expired, G, height - 5, "withdraw", W))
        journal.add(new_entry(elsewhere, DEVNET, height - 5, "deposit", W))  # another public chain

        async def go():
            async with Rpc(server.url) as rpc:
                return await settle(journal, rpc, G, W)

        settled = asyncio.run(go())
    assert [e.signature for e, _ in settled.landed] == [landed] and settled.landed[0][1].slot > 0
    assert [e.signature for e in settled.pending] == [pending]
    assert [e.signature for e in settled.expired] == [expired] and settled.failed == []
    assert {e.signature for e in journal.entries()} == {landed, pending, elsewhere}  # only the expired one dropped


def test_a_nonce_entry_stays_pending_whatever_the_height_until_its_nonce_moves(tmp_path):
    from yieldcli.chain.keys.sign import sign_transaction
    from yieldcli.chain.tx.instructions import build_transaction
    from yieldcli.chain.tx.nonce import build_on_nonce, create_nonce_instructions, fetch_nonce

    runtime = Runtime(tmp_path / "chain.json")
    G = runtime.genesis_hash
    payer, account = Keypair(), Keypair()
    runtime.airdrop(payer.pubkey(), 1_000_000_000)
    journal = Journal(tmp_path / "in-flight.json")
    unseen = str(Signature.new_unique())

    async def go():
        async with Rpc(server.url) as rpc:
            rent = await rpc.minimum_balance_for_rent_exemption(80)
            latest = await rpc.latest_blockhash()
            create = build_transaction(
                create_nonce_instructions(payer.pubkey(), account.pubkey(), payer.pubkey(), rent),
                payer.pubkey(),
                latest.blockhash,
            )
            await rpc.send(sign_transaction(create, [payer, account]).transaction)
            nonce = await fetch_nonce(rpc, account.pubkey())
            journal.add(new_entry(unseen, G, None, "deposit", W, str(account.pubkey()), str(nonce.nonce)))
            runtime.advance_slots(500)  # far past any blockhash: a nonce transaction does not care
            held = await settle(journal, rpc, G, W)
            # Another transaction uses the nonce: the journal's one can never land now.
            await rpc.send(sign_transaction(build_on_nonce([], payer.pubkey(), nonce), [payer]).transaction)
            moved = await settle(journal, rpc, G, W)
            return held, moved

    with RpcServer(runtime) as server:
        held, moved = asyncio.run(go())
    assert [e.signature for e in held.pending] == [unseen] and held.expired == []
    assert [e.signature for e in moved.expired] == [unseen] and journal.entries() == []


def test_a_journal_written_before_durable_nonces_is_still_read(tmp_path):
    import json

    path = tmp_path / "in-flight.json"
    path.write_text(
        json.dumps(
            [
                {
                    "signature": "s",
                    "cluster": "G",
                    "last_valid_block_height": 7,
                    "action": "deposit",
                    "wallet": W,
                    "sent_at": 1.0,
                }
            ]
        )
    )
    [entry] = Journal(path).entries()
    assert entry.last_valid_block_height == 7 and entry.nonce_account is None
    path.write_text(
        json.dumps(
            [
                {
                    "signature": "s",
                    "cluster": "G",
                    "last_valid_block_height": None,
                    "action": "deposit",
                    "wallet": W,
                    "sent_at": 1.0,
                }
            ]
        )
    )
    import pytest

    from yieldcli.errors import ConfigError

    with pytest.raises(ConfigError):  # neither a deadline nor a nonce: it could never be settled
        Journal(path).entries()


def test_a_record_whose_own_blockhash_is_still_valid_is_not_settled_as_expired(tmp_path):
    # Its deadline came from a cached answer, behind its own: the height is past it, but the chain
    # still takes its blockhash, so it may land and stays open.
    runtime = Runtime(tmp_path / "chain.json")
    G = runtime.genesis_hash
    with RpcServer(runtime) as server:
        runtime.advance_slots(10)
        own = runtime.latest_blockhash()
        height = runtime.advance_slots(3)
        unseen = str(Signature.new_unique())
        journal = Journal(tmp_path / "in-flight.json")
        journal.add(new_entry(unseen, G, height - 2, "deposit", W, blockhash=str(own[0])))

        async def go():
            async with Rpc(server.url) as rpc:
                return await settle(journal, rpc, G, W)

        settled = asyncio.run(go())
        assert [e.signature for e in settled.pending] == [unseen] and settled.expired == []
        runtime.advance_slots(BLOCKHASH_WINDOW + 1)  # now its own blockhash has passed too
        settled = asyncio.run(go())
    assert [e.signature for e in settled.expired] == [unseen] and journal.entries() == []


def test_the_same_rpc_serving_another_cluster_while_a_record_is_open_is_a_stop(tmp_path):
    runtime = Runtime(tmp_path / "chain.json")
    with RpcServer(runtime) as server:
        height = runtime.advance_slots(10)
        sent = str(Signature.new_unique())
        journal = Journal(tmp_path / "in-flight.json")
        journal.add(new_entry(sent, DEVNET, height + 100, "deposit", W, rpc=rpc_key(server.url)))

        async def go(url):
            async with Rpc(server.url) as rpc:
                return await settle(journal, rpc, runtime.genesis_hash, W, url)

        with pytest.raises(TransactionPending) as stop:
            asyncio.run(go(server.url))
        # Another URL serving another chain than the record's public one: the record does not hold it back.
        assert asyncio.run(go("http://127.0.0.1:1/other")).pending == []
    assert stop.value.kind == "tx.pending.earlier.cluster_changed" and stop.value.signature == sent
    assert [e.signature for e in journal.entries()] == [sent]  # kept


def test_a_record_under_a_made_up_or_local_cluster_holds_every_other_chain_until_proven_here(tmp_path):
    # An RPC that made up its genesis hash when the record was written, then another spelling of its URL:
    # the record may be of this very chain, so it is a stop until proven landed here.
    runtime = Runtime(tmp_path / "chain.json")
    with RpcServer(runtime) as server:
        height = runtime.advance_slots(10)
        unseen, landed = str(Signature.new_unique()), runtime.airdrop(Keypair().pubkey(), 1_000_000)
        journal = Journal(tmp_path / "in-flight.json")
        journal.add(new_entry(unseen, "made-up-genesis", height + 100, "deposit", W))

        async def go():
            async with Rpc(server.url) as rpc:
                return await settle(journal, rpc, runtime.genesis_hash, W, server.url)

        with pytest.raises(TransactionPending) as stop:
            asyncio.run(go())
        journal.remove(unseen)
        journal.add(new_entry(landed, "made-up-genesis", height + 100, "deposit", W))
        settled = asyncio.run(go())  # landed here: this chain's, and it landed
    assert stop.value.kind == "tx.pending.earlier.cluster_changed"
    assert [e.signature for e, _ in settled.landed] == [landed]
    assert journal.entries()[0].landed_slot == settled.landed[0][1].slot > 0


def test_a_remembered_cluster_the_rpc_no_longer_serves_settles_nothing(tmp_path):
    # The cluster named by the caller may come from memory (a day, for a public URL): before the
    # chain's word settles a record, the RPC is asked which chain it serves now.
    runtime = Runtime(tmp_path / "chain.json")
    with RpcServer(runtime) as server:
        height = runtime.advance_slots(10)
        sent = str(Signature.new_unique())
        journal = Journal(tmp_path / "in-flight.json")
        journal.add(new_entry(sent, "remembered-genesis", height - 5, "deposit", W))  # here: "expired"

        async def go():
            async with Rpc(server.url) as rpc:
                return await settle(journal, rpc, "remembered-genesis", W, server.url)

        with pytest.raises(TransactionPending) as stop:
            asyncio.run(go())
    assert stop.value.kind == "tx.pending.earlier.cluster_changed"
    assert [e.signature for e in journal.entries()] == [sent]
