"""The agent server names the strategy's tokens as the command line does: each asset with its symbol (a
listed token not built in, by its own on-chain metadata), and an `asset` given by that symbol."""

from __future__ import annotations

from tests.mcp.harness import run, server_env, session, structured
from yieldcli.sandbox.demo import DEMO_WALLET, METADATA_TOKENS, SECOND_STRATEGY_ID

SDX, SBOND = (t[1] for t in METADATA_TOKENS)


def test_the_strategy_read_gives_every_assets_symbol_and_asset_takes_them(sandbox, isolated):
    env = {**server_env(sandbox, isolated), "YIELD_STRATEGY": SECOND_STRATEGY_ID}

    async def body():
        async with session(env) as client:
            strategy = await client.call_tool("strategy", {})
            positions = await client.call_tool("positions", {"asset": "sbond"})
            typo = await client.call_tool("positions", {"asset": "SBONDS"})
            return strategy, positions, typo

    strategy, positions, typo = run(body)
    shown = structured(strategy)
    symbols = dict(zip(shown["assets"], shown["symbols"], strict=True))
    assert symbols[SDX] == "SDX" and symbols[SBOND] == "SBOND" and None not in symbols.values(), symbols
    assert not positions.is_error and structured(positions)["wallet"] == DEMO_WALLET
    assert typo.is_error and "SBOND" in typo.content[0].text


def test_the_policy_may_name_a_listed_token_by_its_symbol(sandbox, isolated):
    from tests.mcp.harness import write_private

    policy = 'writes = true\nactions = ["deposit"]\n\n[assets.SDX]\nper_call = "5"\ndaily = "5"\n'
    path = write_private(isolated / "policy" / "policy.toml", policy)
    env = {**server_env(sandbox, isolated), "YIELD_STRATEGY": SECOND_STRATEGY_ID}

    async def body():
        async with session(env, "--policy", str(path)) as client:
            return await client.call_tool("strategy", {})

    assert not run(body).is_error  # the server started: [assets.SDX] named a known token


def test_the_reads_never_call_another_mint_by_a_built_in_symbol():
    from yieldcli.mcp.reads import _symbol

    usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    assert _symbol(usdc, "SDX") == "USDC"  # a built-in mint by its own symbol
    for said in ("USDC", "USDC\u200b", "USDС", "mSΟL"):  # zero-width space, Cyrillic С, Greek Ο
        assert _symbol(SDX, said) == SDX, said
    assert _symbol(SDX, "SDX") == "SDX"
