"""An execute after a send that landed and was never told (a server killed after its send): the person
learns of the earlier landing first, and no second write goes out unsaid."""

from __future__ import annotations

import base64

import anyio
from solders.transaction import VersionedTransaction

from tests.mcp.harness import POLICY, server_env, session, structured, write_private
from tests.mcp.test_server_attacks import usdc
from yieldcli.chain.transact.journal import Journal, new_entry
from yieldcli.client.orders import journal_mirror_path, journal_path
from yieldcli.environment import Environment
from yieldcli.sandbox.demo import DEMO_WALLET


def test_an_execute_after_an_untold_landing_names_it_and_sends_nothing(sandbox, chain, tmp_path):
    signed = chain("deposit", "--asset", "USDC", "--amount", "1", "--sign", "-o", "json")
    assert signed.code == 0, signed.stderr
    tx = VersionedTransaction.from_bytes(base64.b64decode(signed.json()["transaction"]))
    landed = sandbox.runtime.send_transaction(tx)  # sent by a server killed before it could tell anyone
    assert landed.landed
    env = Environment()
    Journal(journal_path(env), journal_mirror_path(env)).claim(
        new_entry(
            landed.signature,
            sandbox.runtime.genesis_hash,
            sandbox.runtime.latest_blockhash()[1],
            "deposit",
            DEMO_WALLET,
            blockhash=str(tx.message.recent_blockhash),
        )
    )
    home = tmp_path / "agent"
    policy = write_private(home / "policy.toml", POLICY)
    before = usdc(sandbox)

    async def body():
        async with session(server_env(sandbox, home), "--policy", str(policy)) as client:
            with anyio.fail_after(90):
                proposal = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}))
                return await client.call_tool("execute", {"proposal_id": proposal["proposal_id"]})

    executed = anyio.run(body)
    assert executed.is_error, executed
    said = " ".join(getattr(c, "text", "") for c in executed.content)
    assert landed.signature in said and "landed" in said, said
    assert usdc(sandbox) == before  # nothing more moved
