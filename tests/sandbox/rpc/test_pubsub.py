"""The sandbox's PubSub, spoken to in raw JSON over a WebSocket: batches, unsubscribing, the errors, and
every notification parsed by solders' `parse_websocket_message` (what solana-py reads them with)."""

from __future__ import annotations

import asyncio
import json

import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.rpc.responses import parse_websocket_message
from websockets.asyncio.client import connect

from yieldcli.sandbox.chain.clock import FINALITY_DEPTH
from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.runtime import Runtime
from yieldcli.solana import programs

SOL = 1_000_000_000
USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")


@pytest.fixture
def served(tmp_path):
    runtime = Runtime(tmp_path / "chain.json")
    server = RpcServer(runtime).start()
    yield runtime, server
    server.stop()


def request(rid: int, method: str, params: list | None = None) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or []}


async def until(ws, wanted: set[str], limit: int = 600) -> dict[str, list]:
    """Notifications by method until each of `wanted` came at least once (each parsed by solders)."""
    got: dict[str, list] = {}
    for _ in range(limit):
        text = await asyncio.wait_for(ws.recv(), 10)
        parse_websocket_message(text)  # raises on a shape solana-py cannot read
        message = json.loads(text)
        got.setdefault(message["method"], []).append(message["params"])
        if wanted <= set(got):
            return got
    raise AssertionError(f"only {sorted(got)} came")


def test_subscriptions_in_a_batch_and_every_kind_of_notification(served):
    runtime, server = served
    user = Keypair()
    runtime.airdrop(user.pubkey(), 10 * SOL)
    token_account = programs.associated_token_address(user.pubkey(), USDC)
    owner_is_user = {"memcmp": {"offset": 32, "bytes": str(user.pubkey())}}

    async def drive():
        async with connect(server.ws_url) as ws:
            batch = [
                request(1, "accountSubscribe", [str(token_account), {"encoding": "jsonParsed"}]),
                request(
                    2, "programSubscribe", [programs.TOKEN_PROGRAM, {"encoding": "base64", "filters": [owner_is_user]}]
                ),
                request(3, "logsSubscribe", [{"mentions": [str(user.pubkey())]}]),
                request(4, "slotSubscribe"),
                request(5, "rootSubscribe"),
                request(6, "slotsUpdatesSubscribe"),
                request(7, "voteSubscribe"),
            ]
            await ws.send(json.dumps(batch))
            answers = json.loads(await ws.recv())
            assert [a["id"] for a in answers] == list(range(1, 8))
            numbers = [a["result"] for a in answers]
            assert len(set(numbers)) == 7
            await asyncio.to_thread(runtime.mint_to, user.pubkey(), USDC, 3_000_000)
            await asyncio.to_thread(runtime.advance_slots, FINALITY_DEPTH + 1)  # the root moves
            got = await until(
                ws,
                {
                    "accountNotification",
                    "programNotification",
                    "logsNotification",
                    "slotNotification",
                    "rootNotification",
                    "slotsUpdatesNotification",
                    "voteNotification",
                },
            )
            await ws.send(json.dumps(request(8, "accountUnsubscribe", [numbers[0]])))
            gone = await ws.recv()
            while json.loads(gone).get("id") != 8:  # notifications may come first
                gone = await ws.recv()
            await ws.send(json.dumps(request(9, "accountUnsubscribe", [numbers[0]])))
            again = await ws.recv()
            while json.loads(again).get("id") != 9:
                again = await ws.recv()
            return got, json.loads(gone), json.loads(again)

    got, gone, again = asyncio.run(drive())
    account = got["accountNotification"][0]["result"]["value"]["data"]["parsed"]["info"]
    assert account["tokenAmount"]["amount"] == "3000000" and account["owner"] == str(user.pubkey())
    program = got["programNotification"][0]["result"]["value"]
    assert program["pubkey"] == str(token_account) and program["account"]["data"][1] == "base64"
    assert got["logsNotification"][0]["result"]["value"]["err"] is None
    told = [n["result"] for n in got["slotNotification"]]
    assert [t["slot"] for t in told] == list(range(told[0]["slot"], told[0]["slot"] + len(told)))  # each slot
    for slot in told:
        assert slot["parent"] == slot["slot"] - 1 and slot["root"] == max(slot["parent"] - FINALITY_DEPTH, 0)
    assert {u["result"]["type"] for u in got["slotsUpdatesNotification"]} >= {"createdBank", "frozen", "root"}
    vote = got["voteNotification"][0]["result"]
    assert vote["slots"] and vote["votePubkey"]
    assert gone["result"] is True
    assert again["error"] == {"code": -32602, "message": "Invalid subscription id."}


def test_refusals_and_a_signature_told_once(served):
    runtime, server = served
    user = Keypair()
    signature = runtime.airdrop(user.pubkey(), SOL)

    async def drive():
        async with connect(server.ws_url) as ws:
            answers = []
            for rid, method, params in [
                (1, "logsSubscribe", [{"mentions": [str(user.pubkey()), str(user.pubkey())]}]),
                (2, "accountSubscribe", ["not-a-key"]),
                (3, "accountSubscribe", [str(user.pubkey()), {"encoding": "yaml"}]),
                (4, "blockSubscribeNope", []),
                (5, "signatureSubscribe", [signature, {"commitment": "confirmed"}]),
            ]:
                await ws.send(json.dumps(request(rid, method, params)))
                answers.append(json.loads(await ws.recv()))
            told = json.loads(await asyncio.wait_for(ws.recv(), 10))
            await ws.send(json.dumps(request(6, "signatureUnsubscribe", [answers[-1]["result"]])))
            after = json.loads(await ws.recv())
            await ws.send("{not json")
            broken = json.loads(await ws.recv())
            return answers, told, after, broken

    answers, told, after, broken = asyncio.run(drive())
    assert answers[0]["error"]["message"] == "Invalid Request: Only 1 address supported"
    assert answers[1]["error"]["code"] == -32602
    assert "unknown variant `yaml`" in answers[2]["error"]["message"]
    assert answers[3]["error"] == {"code": -32601, "message": "Method not found"}
    # Landed before it was subscribed to: told at once, then the subscription is over.
    assert told["method"] == "signatureNotification" and told["params"]["result"]["value"] == {"err": None}
    assert after["error"]["message"] == "Invalid subscription id."
    assert broken["error"]["code"] == -32700
