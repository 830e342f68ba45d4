"""`yield nonce` takes the library's path: it imports nothing of the transaction pipeline
(`yieldcli.chain.transact`), not even for a type; `Client.create_nonce_account` sends, through the
journal of sent signatures like every write. `tests/cli/test_nonce.py` runs the rest against the sandbox."""

from __future__ import annotations

import asyncio
import json

from solders.keypair import Keypair
from solders.system_program import TransferParams, transfer

from tests.architecture.test_layers import PACKAGE, runtime_imports, under
from tests.conftest import write_keypair
from yieldcli.chain.keys.sign import sign_transaction
from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.transact.journal import Journal, new_entry
from yieldcli.chain.tx.instructions import build_transaction
from yieldcli.client.orders import journal_path
from yieldcli.environment import Environment

SOL = 1_000_000_000


def test_the_nonce_commands_import_nothing_of_the_pipeline():
    imported = runtime_imports(PACKAGE / "cli" / "commands" / "nonce_cmd.py", types_too=True)
    assert not {name for name in imported if under(name, ("yieldcli.chain.transact",))}
    assert "yieldcli" in imported  # the Client, from the package's front door


def test_nonce_create_waits_for_an_earlier_send_of_its_payer_as_every_send_does(run, sandbox, tmp_path):
    payer = Keypair()
    sandbox.runtime.airdrop(payer.pubkey(), 2 * SOL)
    keypair_file = write_keypair(tmp_path / "payer.json", payer)

    async def signed_never_sent():
        async with Rpc(sandbox.rpc_url) as rpc:
            latest = await rpc.latest_blockhash()
            work = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=Keypair().pubkey(), lamports=1))
            tx = sign_transaction(build_transaction([work], payer.pubkey(), latest.blockhash), [payer]).transaction
            return str(tx.signatures[0]), latest.last_valid_block_height, await rpc.genesis_hash()

    signature, last_valid, cluster = asyncio.run(signed_never_sent())
    # As a run killed mid-send leaves it: the journal says this transfer may still land.
    entry = new_entry(signature, cluster, last_valid, "transfer", str(payer.pubkey()))
    Journal(journal_path(Environment())).claim(entry)
    created = run(
        "nonce", "create", "--authority", str(Keypair().pubkey()), "-k", keypair_file, "-u", sandbox.rpc_url,
        "--yes", "-o", "json",
    )  # fmt: skip
    assert created.code == 8, created.stderr
    error = json.loads(created.stderr.strip().splitlines()[-1])["error"]
    assert error["kind"] == "tx.pending.earlier" and signature in error["message"]
    assert error["hint"] == f"check it with `yield tx status {signature}`"
    assert sandbox.runtime.get_balance(payer.pubkey()) == 2 * SOL  # nothing was sent
