"""Learning listed tokens from the chain, on the sandbox's real runtime over its JSON-RPC: what a mint's own
metadata says names it, unless another mint of the same listing claims the same symbol (then neither), and
what is written down for completion is never read back as knowledge."""

from __future__ import annotations

import asyncio
import json

from solders.keypair import Keypair
from solders.pubkey import Pubkey

from yieldcli import tokens
from yieldcli.chain import token_names
from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.sandbox.chain.setup import SANDBOX_AUTHORITY
from yieldcli.solana import token_layout, token_metadata


def described_mint(runtime, symbol: str, name: str = "A Token") -> str:
    """A Token-2022 mint of 6 decimals whose metadata extension calls it `symbol`."""
    mint = Keypair().pubkey()
    value = token_metadata.token_2022_value(str(mint), SANDBOX_AUTHORITY.pubkey(), name, symbol)
    pointer = (token_layout.METADATA_POINTER, bytes(SANDBOX_AUTHORITY.pubkey()) + bytes(mint))
    runtime.create_token_2022_mint(6, address=mint, extensions=[pointer, (token_metadata.TOKEN_METADATA, value)])
    return str(mint)


def learn(server, mints) -> list[tokens.Token]:
    async def go():
        async with Rpc(server.url) as rpc:
            return await token_names.learn_tokens(rpc, mints)

    return asyncio.run(go())


def test_a_mint_is_named_by_its_own_metadata(sandbox_chain):
    runtime, server = sandbox_chain
    mint = described_mint(runtime, "ABC", "Alphabet")
    found = learn(server, [mint])
    assert found == [tokens.Token("ABC", mint, 6, "Alphabet")] and tokens.by_mint(mint) == found[0]
    assert tokens.resolve_asset("abc", listed=found) == mint


def test_two_listed_mints_claiming_one_symbol_name_neither(sandbox_chain):
    runtime, server = sandbox_chain
    first, second = described_mint(runtime, "TWIN"), described_mint(runtime, "tw1n")  # reads as TWIN
    assert learn(server, [first, second]) == []
    assert tokens.by_symbol("TWIN") is None and tokens.by_mint(first) is None and tokens.by_mint(second) is None


def test_each_read_is_the_chains_word_now_not_what_this_process_learned(sandbox_chain):
    runtime, server = sandbox_chain
    mint = described_mint(runtime, "FIRST")
    assert [t.symbol for t in learn(server, [mint])] == ["FIRST"]
    value = token_metadata.token_2022_value(mint, SANDBOX_AUTHORITY.pubkey(), "A Token", "SECOND")
    pointer = (token_layout.METADATA_POINTER, bytes(SANDBOX_AUTHORITY.pubkey()) + bytes(Pubkey.from_string(mint)))
    extensions = [pointer, (token_metadata.TOKEN_METADATA, value)]
    runtime.create_token_2022_mint(6, address=Pubkey.from_string(mint), extensions=extensions)
    assert [t.symbol for t in learn(server, [mint])] == ["SECOND"]


def test_a_mint_that_is_not_one_teaches_nothing(sandbox_chain):
    _, server = sandbox_chain
    assert learn(server, [str(Keypair().pubkey()), str(SANDBOX_AUTHORITY.pubkey())]) == []


def test_what_is_written_down_feeds_completion_only(sandbox_chain):
    runtime, server = sandbox_chain
    mint = described_mint(runtime, "REAL")
    learn(server, [mint])
    path = token_names._path()
    written = json.loads(path.read_text())
    (cluster,) = written
    assert written[cluster][mint][:3] == ["REAL", "A Token", 6]
    # An entry swapped in the data folder (an agent can write there) names nothing in a later run.
    other = described_mint(runtime, "OTHER")
    written[cluster][other] = ["REAL", "A Token", 6, written[cluster][mint][3]]
    del written[cluster][mint]
    path.write_text(json.dumps(written))
    tokens.forget_learned()
    assert "REAL" in token_names.remembered_symbols()  # offered on Tab ...
    learn(server, [other])
    assert tokens.by_mint(other).symbol == "OTHER" and tokens.by_symbol("REAL") is None  # ... never believed
