"""Settling the journal before a send, against the sandbox's real JSON-RPC server over loopback."""

import asyncio

from solders.keypair import Keypair
from solders.signature import Signature

from yieldcli.chain.journal import Journal, new_entry
from yieldcli.chain.rpc import Rpc
from yieldcli.chain.settle import settle
from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.runtime import Runtime


def test_settling_sorts_earlier_entries_and_keeps_the_landed_until_acknowledged(tmp_path):
    runtime = Runtime(tmp_path / "chain.json")
    with RpcServer(runtime) as server:
        height = runtime.advance_slots(10)
        landed = runtime.airdrop(Keypair().pubkey(), 1_000_000)
        pending, expired, elsewhere = (str(Signature.new_unique()) for _ in range(3))
        journal = Journal(tmp_path / "in-flight.json")
        journal.add(new_entry(landed, "G", height + 100, "deposit", "w"))
        journal.add(new_entry(pending, "G", height + 100, "deposit", "w"))
        journal.add(new_entry(expired, "G", height - 5, "withdraw", "w"))
        journal.add(new_entry(elsewhere, "other-cluster", height - 5, "deposit", "w"))

        async def go():
            async with Rpc(server.url) as rpc:
                return await settle(journal, rpc, "G", "w")

        settled = asyncio.run(go())
    assert [e.signature for e, _ in settled.landed] == [landed] and settled.landed[0][1].slot > 0
    assert [e.signature for e in settled.pending] == [pending]
    assert [e.signature for e in settled.expired] == [expired] and settled.failed == []
    assert {e.signature for e in journal.entries()} == {landed, pending, elsewhere}  # only the expired one dropped
