"""The sandbox's ledger as a test validator's: from the genesis block at slot 0, every early block
readable by a client that names no transaction version, blocks that never change once served, and
processed, confirmed and finalized moving as a one-node cluster's do. Read with solana-py's AsyncClient
and raw JSON-RPC."""

from __future__ import annotations

import asyncio
import base64
import threading
import time

from solana.rpc.async_api import AsyncClient
from solana.rpc.commitment import Confirmed, Finalized, Processed
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from tests.sandbox.rpc.node import call, result
from yieldcli.sandbox.chain.clock import FINALITY_DEPTH
from yieldcli.sandbox.chain.knobs import Network
from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.runtime import Runtime

SOL = 1_000_000_000
USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")


def pay(runtime: Runtime, payer: Keypair, lamports: int = 1_000_000) -> VersionedTransaction:
    message = Message.new_with_blockhash(
        [transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=Keypair().pubkey(), lamports=lamports))],
        payer.pubkey(),
        Hash.from_string(runtime.latest_blockhash()[0]),
    )
    return VersionedTransaction(message, [payer])


def test_the_ledger_starts_at_the_genesis_block_and_early_blocks_need_no_version(still):
    runtime, server = still
    user = Keypair()
    runtime.airdrop(user.pubkey(), 10 * SOL)  # the sandbox's own set-up transactions, in the first blocks
    runtime.mint_to(user.pubkey(), USDC, 5_000_000)
    runtime.advance_slots(FINALITY_DEPTH + 6)  # block 5 finalized

    async def main():
        async with AsyncClient(server.url) as client:
            first = (await client.get_first_available_block()).value
            # As a test validator's harness does: wait for block 5, then read the first blocks with no version named.
            blocks = [(await client.get_block(slot)).value for slot in range(6)]
            return first, blocks

    first, blocks = asyncio.run(main())
    assert first == 0 and result(server.url, "minimumLedgerSlot") == 0
    genesis = blocks[0]
    assert genesis.parent_slot == 0 and genesis.block_height == 0 and genesis.transactions == []
    assert [b.block_height for b in blocks] == list(range(6))  # none skipped: the height is the slot
    assert [b.parent_slot for b in blocks[1:]] == list(range(5))
    assert all(str(b.previous_blockhash) == str(a.blockhash) for a, b in zip(blocks[1:], blocks[2:], strict=False))
    landed = [t for b in blocks for t in b.transactions]
    assert len(landed) >= 2 and all(t.version is None for t in landed)  # legacy: readable without a version


def test_start_slot_gives_mainnet_like_numbers(tmp_path):
    runtime = Runtime(tmp_path / "chain.json", network=Network(start_slot=300_000_000))
    with RpcServer(runtime) as server:
        first = result(server.url, "getFirstAvailableBlock")
        slot = result(server.url, "getSlot", [{"commitment": "processed"}])
        height = result(server.url, "getBlockHeight", [{"commitment": "processed"}])
        before = call(server.url, "getBlock", [first - 1])["error"]
    assert first == 300_000_000 and slot > first and height == slot - 20_000_000
    assert before["code"] == -32001 and "First available block: 300000000" in before["message"]
    # A chain keeps its numbers across restarts, whatever the start slot asked for then.
    again = Runtime(tmp_path / "chain.json")
    assert again.history().first_block == 300_000_000 and again.block_height == again.slot - 20_000_000


def test_commitment_levels_move_as_a_one_node_clusters_do(still):
    runtime, server = still
    payer = Keypair()
    runtime.airdrop(payer.pubkey(), SOL)
    runtime.advance_slots(FINALITY_DEPTH + 5)
    url = server.url
    if True:  # slots pass only when told here: every read sees one moment
        slots = {c: result(url, "getSlot", [{"commitment": c}]) for c in ("processed", "confirmed", "finalized")}
        default = result(url, "getSlot")
        context = result(url, "getBalance", [str(payer.pubkey()), {"commitment": "confirmed"}])["context"]["slot"]
    assert slots["processed"] == slots["confirmed"] + 1
    assert slots["finalized"] == slots["confirmed"] - FINALITY_DEPTH == default
    assert context == slots["confirmed"]
    # The slot being made is never served, at any commitment: its block is not complete.
    tip = call(url, "getBlock", [slots["processed"], {"commitment": "confirmed"}])["error"]
    assert tip == {"code": -32004, "message": f"Block not available for slot {slots['processed']}"}
    assert call(url, "getBlock", [slots["confirmed"]])["error"]["code"] == -32004  # finalized by default
    assert max(result(url, "getBlocks", [slots["finalized"] - 2])) == slots["finalized"]

    record = runtime.send_transaction(pay(runtime, payer)).record
    assert record is not None
    status = result(url, "getSignatureStatuses", [[record.signature]])["value"][0]
    assert status["confirmationStatus"] == "confirmed" and status["confirmations"] == 0
    assert result(url, "getTransaction", [record.signature]) is None  # not finalized yet
    assert result(url, "getTransaction", [record.signature, {"commitment": "confirmed"}])["slot"] == record.slot
    confirmed_block = result(url, "getBlock", [record.slot, {"commitment": "confirmed"}])
    assert call(url, "getBlock", [record.slot])["error"]["code"] == -32004
    assert result(url, "getSignaturesForAddress", [str(payer.pubkey())])[0]["signature"] != record.signature

    runtime.advance_slots(FINALITY_DEPTH)
    status = result(url, "getSignatureStatuses", [[record.signature]])["value"][0]
    assert status["confirmationStatus"] == "finalized" and status["confirmations"] is None
    assert result(url, "getBlock", [record.slot]) == confirmed_block  # the same block, whoever reads it when
    found = result(url, "getSignaturesForAddress", [str(payer.pubkey())])[0]
    assert found["signature"] == record.signature and found["confirmationStatus"] == "finalized"
    assert result(url, "getBlockCommitment", [record.slot])["commitment"] is None  # rooted


def test_a_finalized_blockhash_is_older_and_still_lands(still):
    runtime, server = still
    payer = Keypair()
    runtime.airdrop(payer.pubkey(), SOL)
    runtime.advance_slots(FINALITY_DEPTH + 5)

    async def main():
        async with AsyncClient(server.url) as client:
            final = (await client.get_latest_blockhash(Finalized)).value
            height = (await client.get_block_height(Finalized)).value
            newest = (await client.get_latest_blockhash(Processed)).value
            message = Message.new_with_blockhash(
                [
                    transfer(
                        TransferParams(from_pubkey=payer.pubkey(), to_pubkey=Keypair().pubkey(), lamports=SOL // 100)
                    )
                ],
                payer.pubkey(),
                final.blockhash,
            )
            sent = (await client.send_transaction(VersionedTransaction(message, [payer]))).value
            await client.confirm_transaction(sent, Confirmed, sleep_seconds=0.05)
            return final, height, newest

    final, height, newest = asyncio.run(main())
    assert final.last_valid_block_height == height + runtime.blockhash_window
    assert final.blockhash != newest.blockhash and newest.last_valid_block_height > final.last_valid_block_height


def test_a_block_watcher_that_reads_each_block_once_sees_every_transaction(node):
    """A watcher reads every confirmed block once (getBlocks from where it was, then getBlock of each)
    while transactions land as it reads: it must see every one of them."""
    runtime, server = node
    payer = Keypair()
    runtime.airdrop(payer.pubkey(), 10 * SOL)
    sent: list[str] = []
    done, watching = threading.Event(), threading.Event()

    def sender():
        watching.wait(30)  # sends from after the watcher's first look on
        for _ in range(20):
            record = runtime.send_transaction(pay(runtime, payer)).record
            assert record is not None
            sent.append(record.signature)
            time.sleep(0.02)
        done.set()

    async def watch():
        seen: list[str] = []
        read: set[int] = set()
        async with AsyncClient(server.url) as client:  # finalized, every client's default
            next_slot = (await client.get_slot()).value
            watching.set()
            while True:
                finished = done.is_set() and next_slot > max(runtime.status(s).slot for s in sent)
                top = (await client.get_slot()).value
                if top >= next_slot:
                    for slot in (await client.get_blocks(next_slot, top)).value:
                        assert slot not in read
                        read.add(slot)
                        block = (await client.get_block(slot)).value
                        seen += [str(t.transaction.signatures[0]) for t in block.transactions]
                    next_slot = top + 1
                if finished:
                    return seen, read, next_slot
                await asyncio.sleep(0.01)

    thread = threading.Thread(target=sender)
    thread.start()
    seen, read, end = asyncio.run(watch())
    thread.join()
    assert len(sent) == 20 and set(sent) <= set(seen)
    assert read == set(range(min(read), end))  # every block once, none skipped


def test_an_unknown_blockhash_near_genesis_is_simply_not_found(still):
    runtime, server = still
    payer = Keypair()
    runtime.airdrop(payer.pubkey(), SOL)
    unknown = Hash.new_unique()  # looked for back to the genesis block and no further
    assert result(server.url, "isBlockhashValid", [str(unknown), {"commitment": "processed"}])["value"] is False
    message = Message.new_with_blockhash(
        [transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=Keypair().pubkey(), lamports=SOL // 10))],
        payer.pubkey(),
        unknown,
    )
    tx = base64.b64encode(bytes(VersionedTransaction(message, [payer]))).decode()
    simulated = result(server.url, "simulateTransaction", [tx, {"encoding": "base64"}])["value"]
    assert simulated["err"] == "BlockhashNotFound"
