"""Issue 36 through the official MCP client: the policy is a symlink, as a dotfile manager installs it,
and the person sets `kill_switch = true` while a proposal waits. However the file is changed (renamed
over, its symlink re-pointed, edited in place), the next execute is refused and nothing moves on the
chain; a policy with a second name is refused at start. The person declines every question."""

from __future__ import annotations

import os
import subprocess

import anyio
import pytest

from tests.conftest import YIELD
from tests.mcp.harness import POLICY, answering, server_env, session, structured, write_private
from tests.mcp.test_policy_files import KILLED, edit_in_place, rename_over, repoint
from tests.mcp.test_server_attacks import usdc


@pytest.mark.parametrize("change", [rename_over, repoint, edit_in_place], ids=["rename-over", "re-pointed", "in-place"])
def test_the_kill_switch_stops_the_next_execute_however_the_policy_was_changed(sandbox, isolated, change):
    env = server_env(sandbox, isolated)
    target = write_private(isolated / ".config" / "yield" / "generations" / "policy-0.toml", POLICY)
    link = isolated / ".config" / "yield" / "mcp-policy.toml"  # the default place: no --policy needed
    link.symlink_to(target)
    before = usdc(sandbox)

    async def body():
        with anyio.fail_after(90):
            async with session(env, elicit=answering("decline")) as client:
                waiting = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
                assert waiting["policy"]["verdict"] == "auto", waiting
                change(link, KILLED)
                executed = await client.call_tool("execute", {"proposal_id": waiting["proposal_id"]})
                again = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
                return executed, again

    executed, again = anyio.run(body)
    assert executed.is_error and structured(executed)["error"]["kind"] == "refused.kill_switch", executed
    assert again["policy"]["verdict"] == "refused" and "kill switch is on" in again["policy"]["reason"], again
    assert usdc(sandbox) == before


def test_a_policy_with_a_second_hard_link_is_refused_at_start(sandbox, isolated):
    env = server_env(sandbox, isolated)
    policy = write_private(isolated / ".config" / "yield" / "mcp-policy.toml", POLICY)
    os.link(policy, isolated / ".local-policy-copy.toml")
    started = subprocess.run(
        [YIELD, "mcp"], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
    )
    assert started.returncode == 3 and "2 hard links" in started.stderr and str(policy) in started.stderr, started
