"""`yield nonce create` / `yield nonce show` against the sandbox over loopback, then a transaction built
on that nonce, signed by two keypairs, left past its blockhash's lifetime, that still lands."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import httpx2
import pytest
from solders.hash import Hash
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer

from yieldcli.chain.keys.sign import sign_transaction
from yieldcli.chain.rpc.adapter import Rpc
from yieldcli.chain.transact.confirm import Rebroadcast, wait_for
from yieldcli.chain.transact.outcomes import Confirmed
from yieldcli.chain.transact.proof import Lifetime
from yieldcli.chain.tx.nonce import build_on_nonce, fetch_nonce, nonce_lifetime
from yieldcli.errors import TransactionExpired
from yieldcli.sandbox.runtime import BLOCKHASH_WINDOW

SOL = 1_000_000_000


def write_keypair(path: Path, keypair: Keypair) -> str:
    path.write_text(json.dumps(list(bytes(keypair))))
    path.chmod(0o600)
    return str(path)


class Payer:
    def __init__(self, keypair: Keypair, file: str):
        self.keypair, self.file = keypair, file

    def pubkey(self) -> Pubkey:
        return self.keypair.pubkey()


@pytest.fixture
def payer(sandbox, tmp_path):
    keypair = Keypair()
    sandbox.runtime.airdrop(keypair.pubkey(), 2 * SOL)
    return Payer(keypair, write_keypair(tmp_path / "payer.json", keypair))


@pytest.fixture
def nonce_cli(run, sandbox):
    def _yield(*args, **kwargs):
        return run(*args, "-u", sandbox.rpc_url, **kwargs)

    return _yield


def rpc_call(url: str, method: str, params: list | None = None):
    return httpx2.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []}, timeout=10
    ).json()["result"]


def test_create_then_show(nonce_cli, sandbox, payer, tmp_path):
    authority = Keypair().pubkey()
    outfile = tmp_path / "nonce-account.json"
    created = nonce_cli(
        "-v",
        "nonce",
        "create",
        "--authority",
        str(authority),
        "-k",
        payer.file,
        "--yes",
        "--outfile",
        str(outfile),
        "-o",
        "json",
    )
    assert created.code == 0, created.stderr
    assert "[yield] sent 1 time(s)" in created.stderr  # --verbose counts the sends
    body = created.json()
    rent = sandbox.runtime.minimum_balance_for_rent_exemption(80)
    assert body["authority"] == str(authority) and body["lamports"] == rent and body["sends"] == 1
    # The keypair file is private and is the nonce account's.
    assert stat.S_IMODE(outfile.stat().st_mode) == 0o600
    assert str(Keypair.from_json(outfile.read_text()).pubkey()) == body["address"]
    data = bytes(sandbox.runtime.get_account(Pubkey.from_string(body["address"])).data)
    assert body["nonce"] == str(Hash(data[40:72]))

    shown = nonce_cli("nonce", "show", body["address"], "-o", "json")
    assert shown.code == 0, shown.stderr
    assert shown.json() == {
        "address": body["address"],
        "authority": str(authority),
        "nonce": body["nonce"],
        "lamports_per_signature": 5000,
        "lamports": rent,
    }
    table = nonce_cli("nonce", "show", body["address"], "-o", "table")
    assert f"authority:  {authority}" in table.stdout and f"nonce:      {body['nonce']}" in table.stdout
    assert "0.00144768 SOL" in table.stdout
    # The payer paid rent plus two signatures (payer and the new account), nothing else.
    assert sandbox.runtime.get_balance(payer.pubkey()) == 2 * SOL - rent - 10_000


def test_refusals(nonce_cli, payer, tmp_path):
    authority = str(Keypair().pubkey())
    no_yes = nonce_cli("nonce", "create", "--authority", authority, "-k", payer.file)
    assert no_yes.code == 2 and "needs --yes" in no_yes.stderr
    bad = nonce_cli("nonce", "create", "--authority", "not-a-key", "-k", payer.file, "--yes")
    assert bad.code == 2 and "invalid --authority" in bad.stderr
    taken = tmp_path / "taken.json"
    taken.write_text("[]")
    exists = nonce_cli("nonce", "create", "--authority", authority, "-k", payer.file, "--yes", "--outfile", str(taken))
    assert exists.code == 2 and "not overwriting" in exists.stderr and taken.read_text() == "[]"
    wallet = nonce_cli("nonce", "show", str(payer.pubkey()))
    assert wallet.code == 2 and "is not a nonce account: it holds 0 bytes" in wallet.stderr
    missing = nonce_cli("nonce", "show", str(Keypair().pubkey()))
    assert missing.code == 2 and "does not exist" in missing.stderr and "yield nonce create" in missing.stderr


def test_a_nonce_transaction_lands_long_after_its_blockhash_would_have_expired(nonce_cli, sandbox, payer):
    cold = Keypair()  # the nonce authority: signs on another machine
    created = nonce_cli(
        "nonce", "create", "--authority", str(cold.pubkey()), "-k", payer.file, "--yes", "-o", "json"
    ).json()
    address = Pubkey.from_string(created["address"])
    friend = Keypair().pubkey()

    async def build():
        async with Rpc(sandbox.rpc_url) as rpc:
            nonce = await fetch_nonce(rpc, address)
            work = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=friend, lamports=SOL // 4))
            return build_on_nonce([work], payer.pubkey(), nonce)

    unsigned = asyncio.run(build())
    lifetime = nonce_lifetime(unsigned.message)
    assert lifetime is not None and lifetime.account == address and lifetime.authority == cold.pubkey()
    assert str(lifetime.value) == created["nonce"]
    partly = sign_transaction(unsigned, [payer.keypair]).transaction  # first machine: the payer signs
    # Much more than a blockhash's lifetime passes, and the current blockhash is expired with the fault knob.
    rpc_call(sandbox.rpc_url, "sandbox_advanceSlots", [BLOCKHASH_WINDOW + 50])
    rpc_call(sandbox.rpc_url, "sandbox_expireBlockhash")
    signed = sign_transaction(partly, [cold])  # second machine: the nonce authority signs
    assert signed.complete

    async def send():
        async with Rpc(sandbox.rpc_url) as rpc:
            signature = await rpc.send(signed.transaction)
            rebroadcast = Rebroadcast(rpc, bytes(signed.transaction), interval=0.05)
            outcome = await wait_for(
                rpc,
                signature,
                Lifetime(None, None, str(lifetime.account), str(lifetime.value)),
                timeout_s=20,
                poll_interval=0.02,
                rebroadcast=rebroadcast,
            )
            with pytest.raises(TransactionExpired):  # the nonce moved on: the same bytes can never land again
                await rpc.send(signed.transaction)
            return outcome

    outcome = asyncio.run(send())
    assert isinstance(outcome, Confirmed)
    assert sandbox.runtime.get_balance(friend) == SOL // 4
    after = nonce_cli("nonce", "show", created["address"], "-o", "json").json()
    assert after["nonce"] != created["nonce"] and after["authority"] == str(cold.pubkey())
