"""Clients written by others against the served sandbox's RPC and PubSub: @solana/web3.js and
solana-py (AsyncClient and its WebSocket client), each through a plain SOL transfer, an SPL token
transfer, a memo and a deposit `yield` built: sent, confirmed by subscription, read back with
getTransaction in every encoding, getBlock and getSignaturesForAddress."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
from pathlib import Path

from solana.rpc.async_api import AsyncClient
from solana.rpc.commitment import Confirmed
from solana.rpc.websocket_api import SolanaWsClient
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.rpc.config import RpcTransactionLogsFilterMentions
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from tests.library.node import node_with
from yieldcli.addresses import b58encode
from yieldcli.sandbox.demo import DEMO_WALLET, demo_keypair
from yieldcli.solana import programs
from yieldcli.tokens import by_symbol

JS_DIR = Path(__file__).resolve().parents[2] / "js"
USDC = Pubkey.from_string(by_symbol("USDC").mint)
WALLET = Pubkey.from_string(DEMO_WALLET)


def _unsigned_deposit(chain, amount: str) -> str:
    result = chain("deposit", "--asset", "USDC", "--amount", amount, "-o", "json")
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)["transaction"]


def test_web3js_sends_confirms_by_subscription_and_reads_back(chain, sandbox):
    node = node_with("@solana/web3.js")
    rpc = sandbox.rpc
    assert rpc.ws_url.endswith(f":{int(rpc.url.rsplit(':', 1)[1]) + 1}")  # PubSub on the RPC's port + 1
    secret = json.dumps(list(bytes(demo_keypair())))
    args = [node, str(JS_DIR / "rpc_drive.mjs"), rpc.url, rpc.ws_url, secret, str(USDC), _unsigned_deposit(chain, "2")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=JS_DIR)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)

    for name in ("sol", "token", "memo", "deposit"):
        sent = got[name]
        assert sent["notified"]["err"] is None, name
        read = sent["read"]
        assert read["json_err"] is None and read["json_fee"] >= 5000
        assert read["slot"] == sent["notified"]["slot"]
        assert sent["signature"] in read["block_signatures"]
        raw = base64.b64decode(read["base64"][0])
        assert read["base64"][1] == "base64" and read["base58"] == [b58encode(raw), "base58"]
        assert str(VersionedTransaction.from_bytes(raw).signatures[0]) == sent["signature"]
    assert got["sol"]["read"]["version"] == "legacy" and got["deposit"]["read"]["version"] == 0
    assert got["sol"]["read"]["parsed_instructions"][0]["parsed"]["type"] == "transfer"
    assert got["sol"]["read"]["parsed_instructions"][0]["parsed"]["info"]["lamports"] == 1_000_000
    create, moved = got["token"]["read"]["parsed_instructions"]
    assert create["parsed"]["type"] == "createIdempotent"
    assert moved["program"] == "spl-token" and moved["parsed"]["info"]["amount"] == "250000"
    assert got["memo"]["read"]["parsed_instructions"] == [{"program": "spl-memo", "parsed": "hello from web3.js"}]
    assert got["recipient_token"] == "250000"
    history = {h["signature"]: h for h in got["history"]}
    assert {got[n]["signature"] for n in ("sol", "token", "memo", "deposit")} <= set(history)
    assert history[got["memo"]["signature"]]["memo"] == "[18] hello from web3.js"
    assert all(h["confirmationStatus"] in ("confirmed", "finalized") for h in got["history"])
    assert got["notes"]["account"] == [1_000_000]
    assert {got[n]["signature"] for n in ("sol", "token", "memo", "deposit")} <= set(got["notes"]["logs"])
    assert got["notes"]["slot"]


def test_solana_py_sends_confirms_by_subscription_and_reads_back(chain, sandbox):
    rpc = sandbox.rpc
    payer = demo_keypair()
    deposit = VersionedTransaction.from_bytes(base64.b64decode(_unsigned_deposit(chain, "1")))
    signed_deposit = VersionedTransaction(deposit.message, [payer])
    recipient = Keypair().pubkey()

    async def drive() -> dict:
        async with AsyncClient(rpc.url) as client, SolanaWsClient(rpc.ws_url) as ws:
            logs = await ws.logs_subscribe(filter_=RpcTransactionLogsFilterMentions(WALLET), commitment=Confirmed)
            watched = await ws.account_subscribe(pubkey=recipient, commitment=Confirmed, encoding="jsonParsed")
            blockhash = (await client.get_latest_blockhash()).value.blockhash
            recipient_ata = programs.associated_token_address(recipient, USDC)
            plain = [
                [transfer(TransferParams(from_pubkey=WALLET, to_pubkey=recipient, lamports=2_000_000))],
                [
                    programs.create_associated_token_account(WALLET, recipient, USDC),
                    programs.token_transfer_checked(
                        programs.associated_token_address(WALLET, USDC), USDC, recipient_ata, WALLET, 125_000, 6
                    ),
                ],
                [programs.memo("hello from solana-py", [WALLET])],
            ]
            txs = [VersionedTransaction(MessageV0.try_compile(WALLET, ixs, [], blockhash), [payer]) for ixs in plain]
            signatures = []
            for tx in [*txs, signed_deposit]:
                signature = (await client.send_raw_transaction(bytes(tx))).value
                await ws.signature_subscribe(signature=signature, commitment="confirmed")
                signatures.append(signature)
            notes = [await asyncio.wait_for(ws.recv(), 20) for _ in range(len(signatures) * 2 + 1)]
            await ws.unsubscribe(logs)
            await ws.unsubscribe(watched)
            reads = {}
            for signature in signatures:
                reads[signature] = {
                    encoding: (
                        await client.get_transaction(
                            signature, encoding=encoding, commitment=Confirmed, max_supported_transaction_version=0
                        )
                    ).value
                    for encoding in ("json", "jsonParsed", "base58", "base64")
                }
            history = (await client.get_signatures_for_address(WALLET, limit=20, commitment=Confirmed)).value
            slot = reads[signatures[-1]]["json"].slot
            block = (await client.get_block(slot, commitment=Confirmed, max_supported_transaction_version=0)).value
            return {"signatures": signatures, "notes": notes, "reads": reads, "history": history, "block": block}

    got = asyncio.run(drive())
    signatures = got["signatures"]
    kinds = [type(n).__name__ for n in got["notes"]]
    assert kinds.count("SignatureNotification") == 4 and kinds.count("LogsNotification") == 4
    assert kinds.count("AccountNotification") >= 1
    told = {n.subscription: n.result.value.err for n in got["notes"] if type(n).__name__ == "SignatureNotification"}
    assert list(told.values()) == [None] * 4
    logged = [str(n.result.value.signature) for n in got["notes"] if type(n).__name__ == "LogsNotification"]
    assert logged == [str(s) for s in signatures]
    for signature in signatures:
        read = got["reads"][signature]
        assert read["json"].transaction.meta.err is None
        assert read["base58"].transaction.transaction.signatures[0] == signature
        assert read["base64"].transaction.transaction.signatures[0] == signature
        assert bytes(read["base58"].transaction.transaction) == bytes(read["base64"].transaction.transaction)
    memo = got["reads"][signatures[2]]["jsonParsed"].transaction.transaction.message.instructions[0]
    assert memo.program == "spl-memo" and memo.parsed == "hello from solana-py"
    moved = got["reads"][signatures[1]]["jsonParsed"].transaction.transaction.message.instructions[1]
    assert moved.parsed["type"] == "transferChecked" and moved.parsed["info"]["tokenAmount"]["amount"] == "125000"
    listed = [h.signature for h in got["history"]]
    assert listed[:4] == list(reversed(signatures))  # newest first
    assert got["block"].transactions[0].transaction.signatures[0] == signatures[-1]
