"""Issue 35 through `yield mcp`: a proposal whose transaction carries a signature-verification precompile
(Ed25519 verifying one valid signature 30 times, each charged as a signature) is refused by the guard
and cannot be executed; the chain is unchanged. Without the precompile the same proposal is not refused."""

from __future__ import annotations

from tests.cli.commands.test_write_precompiles import with_precompile
from tests.mcp.harness import answering, server_env, session, structured, write_private
from tests.mcp.harness import run as run_async
from tests.mcp.test_server_guard_effect import POLICY

PROPOSALS = [
    ("prepare_deposit", {"asset": "USDC", "amount": "10"}),
    ("prepare_withdraw", {"asset": "USDC", "amount": "5"}),
]


def test_a_proposal_with_a_precompile_is_refused_and_cannot_be_executed(world, isolated):
    policy = write_private(isolated / "policy" / "policy.toml", POLICY)
    env = server_env(world.sandbox, isolated, api_url=world.stand_in.url)
    outcomes: dict[str, object] = {}

    async def agent():
        async with session(env, "--policy", str(policy), elicit=answering("accept")) as client:
            for tool, arguments in PROPOSALS:
                world.stand_in.doctor = None
                fair = structured(await client.call_tool(tool, arguments))
                assert fair["policy"]["verdict"] != "refused", fair
                world.doctor(with_precompile())
                before = world.snapshot()
                answer = await client.call_tool(tool, arguments)
                proposal = structured(answer) if not answer.is_error else None
                executed = None
                if proposal and proposal.get("proposal_id"):
                    executed = await client.call_tool("execute", {"proposal_id": proposal["proposal_id"]})
                said = str(proposal) if proposal else str(answer.content)
                outcomes[tool] = (
                    (proposal is None or proposal["policy"]["verdict"] == "refused"),
                    executed is None or executed.is_error,
                    world.snapshot() == before,
                    "signature-verification precompile" in said,
                )

    run_async(agent)
    assert outcomes == {tool: (True, True, True, True) for tool, _ in PROPOSALS}, outcomes
