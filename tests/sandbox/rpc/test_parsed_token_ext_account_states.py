"""The state of Token-2022's interest-bearing, scaled-UI-amount and token-metadata extensions in
`jsonParsed` accounts, as agave's `parse_token_extension` gives it (they were "unparseableExtension"):
mints the Token-2022 program itself initialized on the sandbox chain, and the sandbox's SDX, whose name
lives in its own metadata extension."""

from __future__ import annotations

import asyncio
import json
import struct
import urllib.request

from solana.rpc.async_api import AsyncClient
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountParams, create_account

from tests.sandbox.rpc.test_parsed_token_ext_mints import INTEREST_AND_PAUSE, SCALED, T22, ix, w
from tests.sandbox.rpc.test_server_flows import send
from yieldcli.sandbox.demo import METADATA_TOKENS

SOL = 1_000_000_000


def extensions(url: str, address: str) -> dict[str, dict]:
    asked = {"encoding": "jsonParsed", "commitment": "confirmed"}  # just made: not finalized yet
    body = {"jsonrpc": "2.0", "id": 1, "method": "getAccountInfo", "params": [address, asked]}
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        parsed = json.loads(answer.read())["result"]["value"]["data"]["parsed"]
    return {e["extension"]: e.get("state") for e in parsed["info"]["extensions"]}


def test_interest_bearing_and_scaled_mints_as_the_program_made_them(node):
    runtime, server = node
    owner, interest, scaled = Keypair(), Keypair(), Keypair()
    o = owner.pubkey()
    runtime.airdrop(o, 10 * SOL)

    async def main():
        async with AsyncClient(server.url) as client:
            i, sc = interest.pubkey(), scaled.pubkey()
            rate = [ix(bytes([33, 0]) + bytes(o) + struct.pack("<h", 50), w(i)), ix(bytes([44, 0]) + bytes(o), w(i))]
            multiplier = [ix(bytes([43, 0]) + bytes(32) + struct.pack("<d", 1.5), w(sc))]
            for mint, space, init in ((interest, INTEREST_AND_PAUSE, rate), (scaled, SCALED, multiplier)):
                lamports = (await client.get_minimum_balance_for_rent_exemption(space)).value
                key = mint.pubkey()
                made = CreateAccountParams(from_pubkey=o, to_pubkey=key, lamports=lamports, space=space, owner=T22)
                mint_init = ix(bytes([20, 2]) + bytes(o) + bytes([0]), w(key))
                await send(client, [create_account(made), *init, mint_init], [owner, mint])

    asyncio.run(main())
    rate = extensions(server.url, str(interest.pubkey()))["interestBearingConfig"]
    assert rate["rateAuthority"] == str(o) and rate["preUpdateAverageRate"] == 50 and rate["currentRate"] == 50
    assert rate["initializationTimestamp"] == rate["lastUpdateTimestamp"] > 0
    assert extensions(server.url, str(scaled.pubkey()))["scaledUiAmountConfig"] == {
        "authority": None,
        "multiplier": "1.5",
        "newMultiplierEffectiveTimestamp": 0,
        "newMultiplier": "1.5",
    }


def test_a_mint_named_by_its_own_metadata(sandbox):
    symbol, mint, _, name, _ = METADATA_TOKENS[0]
    found = extensions(sandbox.rpc_url, mint)
    assert found["metadataPointer"]["metadataAddress"] == mint
    assert found["tokenMetadata"] == {
        "updateAuthority": found["metadataPointer"]["authority"],
        "mint": mint,
        "name": name,
        "symbol": symbol,
        "uri": "",
        "additionalMetadata": [],
    }
    assert str(Pubkey.from_string(found["tokenMetadata"]["updateAuthority"]))
