"""Which cluster an RPC serves, asked of the sandbox's real JSON-RPC server over loopback."""

import asyncio

import pytest
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.rpc.cluster_identity import GENESIS_HASHES, check_same_cluster, cluster_named
from yieldcli.errors import ExitCode, Refused
from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.runtime import Runtime


@pytest.fixture
def rpc_url(tmp_path):
    server = RpcServer(Runtime(tmp_path / "chain.json")).start()
    yield server.url
    server.stop()


def _transfer(blockhash: str) -> VersionedTransaction:
    payer = Keypair()
    ix = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=Keypair().pubkey(), lamports=1))
    return VersionedTransaction(MessageV0.try_compile(payer.pubkey(), [ix], [], Hash.from_string(blockhash)), [payer])


async def _check(url: str, blockhash: str | None, expected: str | None):
    async with Rpc(url) as rpc:
        blockhash = blockhash or str((await rpc.latest_blockhash()).blockhash)
        return await check_same_cluster(rpc, _transfer(blockhash), expected), rpc


def test_the_genesis_hash_names_the_cluster_and_is_asked_once(rpc_url):
    genesis, rpc = asyncio.run(_check(rpc_url, None, None))
    assert genesis == asyncio.run(Rpc(rpc_url).genesis_hash())
    assert rpc._genesis == genesis  # cached: asked once per run
    assert cluster_named(GENESIS_HASHES["mainnet-beta"]) == "mainnet-beta" and cluster_named("x") is None


def test_a_transaction_for_mainnet_is_refused_on_an_rpc_of_another_cluster(rpc_url):
    genesis = asyncio.run(Rpc(rpc_url).genesis_hash())
    expected = next(name for name, known in GENESIS_HASHES.items() if known != genesis)
    with pytest.raises(Refused) as refused:
        asyncio.run(_check(rpc_url, None, expected))
    actual = cluster_named(genesis) or "another cluster"
    assert refused.value.message.startswith(f"the RPC at {rpc_url} is {actual}")
    assert f"this transaction is for {expected}" in refused.value.message
    assert refused.value.exit_code == ExitCode.REFUSED


def test_a_blockhash_the_rpc_does_not_know_is_refused(rpc_url):
    with pytest.raises(Refused, match="does not know this transaction's blockhash") as refused:
        asyncio.run(_check(rpc_url, str(Hash.new_unique()), None))
    assert "another cluster" in refused.value.message
