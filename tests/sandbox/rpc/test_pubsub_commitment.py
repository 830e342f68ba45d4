"""PubSub at each commitment: a signature subscription is told when its transaction reaches the
commitment it asked for, and the root moves only as finalized does (solana-py's WebSocket client)."""

from __future__ import annotations

import asyncio

from solana.rpc.websocket_api import SolanaWsClient
from solders.keypair import Keypair
from solders.rpc.responses import RootNotification, SignatureNotification
from solders.signature import Signature

from yieldcli.sandbox.chain.clock import FINALITY_DEPTH

SOL = 1_000_000_000


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
