"""Issue 25 through `yield mcp`: an agent's proposal built on a doctored answer of each kind
(tests/cli/effect_attacks.py) is refused by the guard, cannot be executed, and the chain is unchanged.
The same proposals without the doctor are not refused by the policy used here, so the refusal is the
guard's. One sandbox and one server session serve the whole test.
"""

from __future__ import annotations

from tests.cli import effect_world as ew
from tests.cli.effect_attacks import ATTACKS
from tests.mcp.harness import answering, server_env, session, structured, write_private
from tests.mcp.harness import run as run_async

POLICY = """\
writes = true
actions = ["deposit", "withdraw", "close-account"]
writes_per_hour = 100

[assets.USDC]
auto_per_call = "100000"
auto_daily = "1000000"
per_call = "100000"
daily = "1000000"

[assets.SOL]
auto_per_call = "1000"
auto_daily = "1000"
per_call = "1000"
daily = "1000"

[assets.JitoSOL]
auto_per_call = "1000"
auto_daily = "1000"
per_call = "1000"
daily = "1000"
"""

PROPOSALS = {
    # the attack: (tool, its arguments)
    "k1-deposit-close-other-position": ("prepare_deposit", {"asset": "USDC", "amount": "10"}),
    "k1-deposit-close-other-position-recipient-in-table": ("prepare_deposit", {"asset": "USDC", "amount": "10"}),
    "k2-withdraw-all-99-to-user-rest-to-stranger": ("prepare_withdraw", {"asset": "USDC", "all": True}),
    "k2-withdraw-sol-all-unwrap-99-to-user-rest-to-stranger": (
        "prepare_withdraw",
        {"asset": "SOL", "all": True, "unwrap_wsol": True},
    ),
    "k2-withdraw-exclude-fees-2000-and-15-usdc-of-other-position-to-stranger": (
        "prepare_withdraw",
        {"asset": "USDC", "amount": "2000", "exclude_fees": True},
    ),
    "k2-withdraw-jitosol-all-covers-15-usdc-of-other-position-to-stranger": (
        "prepare_withdraw",
        {"asset": "JitoSOL", "all": True},
    ),
    "k3-deposit-into-second-strategy": ("prepare_deposit", {"asset": "USDC", "amount": "10"}),
    "k3-deposit-opens-position-in-unoffered-strategy": ("prepare_deposit", {"asset": "USDC", "amount": "10"}),
    "k4-deposit-init-vaults-prefunded": ("prepare_deposit", {"asset": "USDC", "amount": "10"}),
    "k5-deposit-whole-balance-to-missing-table": ("prepare_deposit", {"asset": "USDC", "amount": "10"}),
    "k6-deposit-on-attackers-nonce-attacker-signed": ("prepare_deposit", {"asset": "USDC", "amount": "10"}),
    "k6-deposit-on-fresh-nonce-of-the-user": ("prepare_deposit", {"asset": "USDC", "amount": "10"}),
    "k6-withdraw-cosigned-by-stranger": ("prepare_withdraw", {"asset": "USDC", "amount": "5"}),
}


def test_each_attack_is_a_refused_proposal_that_cannot_be_executed(tmp_path_factory, run, isolated):
    world = ew.each_test(ew.shared_world(tmp_path_factory), run)
    policy = write_private(isolated / "policy" / "policy.toml", POLICY)
    env = server_env(world.sandbox, isolated, api_url=world.stand_in.url)
    outcomes: dict[str, str] = {}

    async def agent():
        async with session(env, "--policy", str(policy), elicit=answering("accept")) as client:
            for tool, arguments in {*((t, tuple(a.items())) for t, a in PROPOSALS.values())}:
                world.stand_in.doctor = None
                fair = structured(await client.call_tool(tool, dict(arguments)))
                assert fair["policy"]["verdict"] != "refused", fair  # the policy alone lets it through
            for name, (tool, arguments) in PROPOSALS.items():
                world.stand_in.doctor = None
                if ew.positions(world) != world.positions:  # an earlier attack landed: what follows proves nothing
                    outcomes[name] = "NOT tried: an earlier attack landed"
                    continue
                ATTACKS[name][1](world)
                before = ew.state(world)
                answer = await client.call_tool(tool, arguments)
                proposal = structured(answer) if not answer.is_error else None
                executed = None
                if proposal and proposal.get("proposal_id"):
                    executed = await client.call_tool("execute", {"proposal_id": proposal["proposal_id"]})
                refused = (proposal is None or proposal["policy"]["verdict"] == "refused") and (
                    executed is None or executed.is_error
                )
                unchanged = ew.state(world) == before
                outcomes[name] = "refused" if refused and unchanged else f"NOT refused: {proposal}"

    try:
        run_async(agent)
    finally:
        world.stand_in.stop()
        world.sandbox.stop()
    assert all(o == "refused" for o in outcomes.values()), {n: o[:300] for n, o in outcomes.items() if o != "refused"}
