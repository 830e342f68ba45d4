"""PubSub at each commitment, as a validator tells: a signature subscription is told when its transaction
reaches the commitment it asked for (and when received, if asked), account, program and logs
subscriptions each block once it reaches theirs (none named: finalized), with that block's slot and
the accounts as they stood then; the root moves only as finalized does."""

from __future__ import annotations

import asyncio
import json

from solana.rpc.websocket_api import SolanaWsClient
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message
from solders.rpc.responses import RootNotification, SignatureNotification, parse_websocket_message
from solders.signature import Signature
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction
from websockets.asyncio.client import connect

from yieldcli.sandbox.chain.clock import FINALITY_DEPTH

SOL = 1_000_000_000
SYSTEM = "11111111111111111111111111111111"


def test_a_signature_is_told_at_the_commitment_it_asked_for(still):
    runtime, server = still
    signature = runtime.airdrop(Keypair().pubkey(), SOL)
    slot = runtime.status(signature).slot

    async def main():
        async with SolanaWsClient(server.ws_url) as ws:
            await ws.signature_subscribe(signature=Signature.from_string(signature), commitment="confirmed")
            confirmed = await asyncio.wait_for(ws.recv(), 10)
            await ws.signature_subscribe(signature=Signature.from_string(signature), commitment="finalized")
            await ws.root_subscribe()
            try:
                early = await asyncio.wait_for(ws.recv(), 1.0)
            except TimeoutError:
                early = None
            await asyncio.to_thread(runtime.advance_slots, FINALITY_DEPTH + 1)
            told = []
            while {type(n) for n in told} < {SignatureNotification, RootNotification}:
                told.append(await asyncio.wait_for(ws.recv(), 10))
            return confirmed, early, told

    confirmed, early, told = asyncio.run(main())
    assert isinstance(confirmed, SignatureNotification) and confirmed.result.context.slot == slot
    assert early is None  # not finalized yet: nothing told
    roots = [n.result for n in told if isinstance(n, RootNotification)]
    assert roots and roots[-1] >= slot  # the root moved past the transaction's slot with it
    assert [n.result.value.err for n in told if isinstance(n, SignatureNotification)] == [None]


def _transfer(runtime, payer: Keypair, to, lamports: int) -> VersionedTransaction:
    blockhash, _ = runtime.latest_blockhash()
    message = Message.new_with_blockhash(
        [transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=to, lamports=lamports))],
        payer.pubkey(),
        Hash.from_string(blockhash),
    )
    return VersionedTransaction(message, [payer])


def _request(rid: int, method: str, params: list) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


async def _gather(ws, seconds: float) -> list[dict]:
    """Every notification that comes within `seconds`, each parsed by solders as solana-py reads it
    (but `receivedSignature`, which a node sends as this does and solders does not read)."""
    told = []
    try:
        while True:
            text = await asyncio.wait_for(ws.recv(), seconds)
            note = json.loads(text)["params"]
            if note["result"]["value"] != "receivedSignature":
                parse_websocket_message(text)
            told.append(note)
    except TimeoutError:
        return told


def test_account_program_and_logs_are_told_at_their_commitment_each_block_as_it_stood(still):
    runtime, server = still
    payer, who = Keypair(), Keypair().pubkey()
    runtime.airdrop(payer.pubkey(), 10 * SOL)
    runtime.advance_slots(FINALITY_DEPTH + 1)
    first, second = _transfer(runtime, payer, who, SOL), None
    subscriptions = {
        "confirmed": ("accountSubscribe", [str(who), {"commitment": "confirmed", "encoding": "base64"}]),
        "default": ("accountSubscribe", [str(who), {"encoding": "base64"}]),
        "logs": ("logsSubscribe", [{"mentions": [str(who)]}, {"commitment": "processed"}]),
        "program": ("programSubscribe", [SYSTEM, {"encoding": "base64", "filters": [{"dataSize": 0}]}]),
        "signature": ("signatureSubscribe", [str(first.signatures[0]), {"enableReceivedNotification": True}]),
    }

    async def main():
        nonlocal second
        async with connect(server.ws_url) as ws:
            numbers = {}
            for rid, (name, (method, params)) in enumerate(subscriptions.items(), 1):
                await ws.send(_request(rid, method, params))
                numbers[json.loads(await ws.recv())["result"]] = name
            await asyncio.to_thread(runtime.send_transaction, first)
            second = _transfer(runtime, payer, who, SOL)
            await asyncio.to_thread(runtime.send_transaction, second)
            early = await _gather(ws, 1.0)
            await asyncio.to_thread(runtime.advance_slots, FINALITY_DEPTH + 2)
            late = await _gather(ws, 1.5)
            return [(numbers[n["subscription"]], n["result"]) for n in early], [
                (numbers[n["subscription"]], n["result"]) for n in late
            ]

    early, late = asyncio.run(main())
    one, two = runtime.status(str(first.signatures[0])).slot, runtime.status(str(second.signatures[0])).slot
    assert one < two

    def told(notes, name):
        return [(r["context"]["slot"], r["value"]) for n, r in notes if n == name]

    # processed and confirmed: at once, each block with its own slot and the account as it stood then
    assert [(s, v["lamports"]) for s, v in told(early, "confirmed")] == [(one, SOL), (two, 2 * SOL)]
    assert [(s, v["signature"]) for s, v in told(early, "logs")] == [
        (one, str(first.signatures[0])),
        (two, str(second.signatures[0])),
    ]
    assert told(early, "signature") == [(one, "receivedSignature")]
    # none named (finalized) and finalized: nothing until the blocks are 32 deep, then each block on its own
    assert told(early, "default") == told(early, "program") == []
    assert [(s, v["lamports"]) for s, v in told(late, "default")] == [(one, SOL), (two, 2 * SOL)]
    program = [(s, v["pubkey"], v["account"]["lamports"]) for s, v in told(late, "program") if v["pubkey"] == str(who)]
    assert program == [(one, str(who), SOL), (two, str(who), 2 * SOL)]
    assert told(late, "signature") == [(one, {"err": None})]
    assert told(late, "confirmed") == told(late, "logs") == []  # each block is told once


def test_a_subscription_made_right_after_a_send_is_told_of_its_block_and_no_older_one(still):
    # A node confirms a block a slot after the send; here the block is confirmed at once, so a client
    # that sends, then subscribes within the slot, is told of it as on a node.
    runtime, server = still
    who = Keypair().pubkey()
    runtime.airdrop(who, SOL)
    landed = runtime.slot - 1

    async def told(params):
        async with connect(server.ws_url) as ws:
            await ws.send(_request(1, "accountSubscribe", params))
            await ws.recv()
            return [n["result"]["context"]["slot"] for n in await _gather(ws, 1.0)]

    confirmed = [str(who), {"commitment": "confirmed", "encoding": "base64"}]
    assert asyncio.run(told(confirmed)) == [landed]
    runtime.advance_slots(1)  # a slot later the block is old news
    assert asyncio.run(told(confirmed)) == []
