"""`yield mcp` and trusted destinations: an agent's deposit obeys the trust the person gave, and no
tool can give it."""

from __future__ import annotations

from tests.cli.commands.test_write_intent import destination_swapped
from tests.cli.stand_in import World
from tests.mcp.harness import POLICY, answering, server_env, session, structured, write_private
from tests.mcp.harness import run as run_async


def test_an_untrusted_plain_transfer_is_refused_no_tool_trusts_it_and_the_persons_trust_lets_it_confirm(
    sandbox, run, tmp_path, isolated
):
    home = isolated
    policy = write_private(home / "policy" / "policy.toml", POLICY)
    trust_file = home / ".config" / "yield" / "trusted-destinations.toml"
    world = World(sandbox, run, tmp_path)
    try:
        world.doctor(destination_swapped(world.stranger_ata))  # the deposit is a plain transfer to this account
        env = server_env(sandbox, home, api_url=world.stand_in.url)
        before = world.snapshot()

        async def refused():
            async with session(env, "--policy", str(policy), elicit=answering("accept")) as client:
                tools = [t.name for t in (await client.list_tools()).tools]
                for name in tools:  # every tool, with arguments an agent might try
                    await client.call_tool(
                        name,
                        {
                            "asset": "USDC",
                            "amount": "1",
                            "proposal_id": "x",
                            "destination": str(world.stranger_ata),
                            "trust": True,
                            "trusted": [str(world.stranger_ata)],
                        },
                    )
                answer = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
                return tools, answer, await client.call_tool("execute", {"proposal_id": answer["proposal_id"]})

        tools, answer, executed = run_async(refused)
        assert not any("trust" in name for name in tools)
        assert not trust_file.exists()  # no tool wrote it
        assert answer["policy"]["verdict"] == "refused" and not answer["executable"], answer
        assert "you have not trusted for this strategy on this cluster" in answer["policy"]["reason"]
        assert executed.is_error and world.snapshot() == before

        # The person trusts it on the command line: the same deposit by the agent now confirms.
        added = world.yield_("config", "trust", "add", str(world.stranger_ata), "--asset", "USDC")
        assert added.code == 0, added.stderr

        async def trusted():
            async with session(env, "--policy", str(policy), elicit=answering("accept")) as client:
                answer = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
                assert answer["executable"], answer
                return structured(await client.call_tool("execute", {"proposal_id": answer["proposal_id"]}))

        assert run_async(trusted)["status"] == "confirmed"
    finally:
        world.stand_in.stop()
