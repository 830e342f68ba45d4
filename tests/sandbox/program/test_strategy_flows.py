"""The sandbox strategy program seen from outside: `yield` flows that move money through it, the
positions read back from its accounts, hostile instructions sent to it over the sandbox's RPC, the
program id in `yield sandbox info`, and the migration message for a chain made by an older yield."""

from __future__ import annotations

import base64
import json
import urllib.request
from pathlib import Path

from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET, demo_keypair
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp
from yieldcli.solana.programs import SANDBOX_STRATEGY_PROGRAM
from yieldcli.tokens import by_symbol

USDC = Pubkey.from_string(by_symbol("USDC").mint)
WALLET = Pubkey.from_string(DEMO_WALLET)


def rpc(url: str, method: str, params: list) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    with urllib.request.urlopen(
        urllib.request.Request(url, body, {"Content-Type": "application/json"}), timeout=30
    ) as answer:
        return json.loads(answer.read())


def position_on_chain(url: str, user: Pubkey, mint: Pubkey) -> sp.Position | None:
    value = rpc(
        url,
        "getAccountInfo",
        [str(sp.position_address(user, DEMO_STRATEGY_ID, mint)), {"encoding": "base64", "commitment": "confirmed"}],
    )["result"]["value"]
    return None if value is None else sp.parse_position(value["owner"], base64.b64decode(value["data"][0]))


def send(url: str, ixs, signers: list[Keypair]) -> dict:
    blockhash = rpc(url, "getLatestBlockhash", [])["result"]["value"]["blockhash"]
    message = MessageV0.try_compile(signers[0].pubkey(), ixs, [], Hash.from_string(blockhash))
    tx = VersionedTransaction(message, signers)
    return rpc(url, "sendTransaction", [base64.b64encode(bytes(tx)).decode(), {"encoding": "base64"}])


def test_what_yield_moves_is_what_the_position_account_records_and_what_is_served(chain, sandbox):
    before = position_on_chain(sandbox.rpc_url, WALLET, USDC)
    assert before is not None and before.user == DEMO_WALLET
    deposit = chain("deposit", "--asset", "USDC", "--amount", "12.5", "--send", "--yes", "-o", "json")
    assert deposit.code == 0, deposit.stderr
    after = position_on_chain(sandbox.rpc_url, WALLET, USDC)
    assert (after.balance, after.deposited) == (before.balance + 12_500_000, before.deposited + 12_500_000)
    served = chain("positions", "--asset", "USDC", "-o", "json").json()["data"]
    mine = [p for p in served if p["strategy_id"] == DEMO_STRATEGY_ID]
    assert mine[0]["total_position_value"] == after.balance and mine[0]["total_deposited_value"] == after.deposited
    withdraw = chain("withdraw", "--asset", "USDC", "--all", "--send", "--yes", "-o", "json")
    assert withdraw.code == 0, withdraw.stderr
    review = withdraw.json()["review"]["instructions"]
    decoded = [i for i in review if i["program"] == "Sandbox strategy program"]
    assert [i["kind"] for i in decoded] == ["withdraw"] and decoded[0]["details"]["all"] is True
    assert position_on_chain(sandbox.rpc_url, WALLET, USDC).balance == 0
    closed = chain("close-account", "--asset", "USDC", "--send", "--yes", "-o", "json")
    assert closed.code == 0, closed.stderr
    assert position_on_chain(sandbox.rpc_url, WALLET, USDC) is None


def test_hostile_instructions_over_the_sandbox_rpc_are_refused_by_the_program(sandbox):
    url = sandbox.rpc_url
    thief = Keypair()
    assert "result" in rpc(url, "requestAirdrop", [str(thief.pubkey()), 10**9])
    sandbox.runtime.mint_to(thief.pubkey(), USDC, 1)
    thief_ata = programs.associated_token_address(thief.pubkey(), USDC)
    victim_position = sp.position_address(WALLET, DEMO_STRATEGY_ID, USDC)
    before = position_on_chain(url, WALLET, USDC)
    # Someone else's position: the thief signs a withdrawal naming the demo wallet's position.
    steal = sp.withdraw(thief.pubkey(), thief_ata, USDC, DEMO_STRATEGY_ID, 1_000_000)
    steal.accounts = [*steal.accounts[:5], type(steal.accounts[0])(victim_position, False, True), steal.accounts[6]]
    answer = send(url, [steal], [thief])
    assert "custom program error: 0x6" in json.dumps(answer["error"])  # NotPositionOwner
    # Closing it to the thief.
    answer = send(url, [sp.close(thief.pubkey(), thief_ata, USDC, victim_position)], [thief])
    assert "custom program error: 0x6" in json.dumps(answer["error"])
    # The owner's own overdraw.
    answer = send(
        url,
        [
            sp.withdraw(
                WALLET, programs.associated_token_address(WALLET, USDC), USDC, DEMO_STRATEGY_ID, before.balance + 1
            )
        ],
        [demo_keypair()],
    )
    assert "custom program error: 0x7" in json.dumps(answer["error"])  # Overdraw
    # A yield the thief credits itself.
    fake_yield = sp.credit_yield(thief_ata, USDC, victim_position, 1)
    fake_yield.accounts = [type(fake_yield.accounts[0])(thief.pubkey(), True, False), *fake_yield.accounts[1:]]
    answer = send(url, [fake_yield], [thief])
    assert "custom program error: 0xb" in json.dumps(answer["error"])  # NotYieldAuthority
    assert position_on_chain(url, WALLET, USDC) == before


def test_sandbox_info_names_the_strategy_program(run):
    info = run("sandbox", "info", "-o", "json").json()
    assert info["strategy_program"] == SANDBOX_STRATEGY_PROGRAM == str(sp.PROGRAM)
    table = run("sandbox", "info", "-o", "table").stdout
    assert SANDBOX_STRATEGY_PROGRAM in table and "not the real service's" in table


def test_a_chain_made_by_an_older_yield_says_so_and_reset_starts_afresh(run):
    folder = Path(run("sandbox", "info", "-o", "json").json()["state_folder"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "chain.json").write_text(json.dumps({"version": 2, "clock": {}, "accounts": {}, "transactions": []}))
    old = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1")
    assert old.code != 0 and "older version of yield" in old.stderr and "yield sandbox reset" in old.stderr, old.stderr
    assert run("sandbox", "reset").code == 0
    fresh = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    assert fresh.code == 0, fresh.stderr
    assert any(i["program"] == "Sandbox strategy program" for i in fresh.json()["review"]["instructions"])


def test_a_position_address_sent_lamports_by_a_stranger_still_opens_on_the_next_deposit(chain, sandbox):
    """The guard accepts the program topping the address up (a transfer inside the pinned program)."""
    assert chain("withdraw", "--asset", "USDC", "--all", "--send", "--yes", "-o", "json").code == 0
    assert chain("close-account", "--asset", "USDC", "--send", "--yes", "-o", "json").code == 0
    griefer = Keypair()
    assert "result" in rpc(sandbox.rpc_url, "requestAirdrop", [str(griefer.pubkey()), 10**9])
    address = sp.position_address(WALLET, DEMO_STRATEGY_ID, USDC)
    sent = send(
        sandbox.rpc_url,
        [transfer(TransferParams(from_pubkey=griefer.pubkey(), to_pubkey=address, lamports=890_880))],
        [griefer],
    )
    assert "result" in sent, sent
    deposit = chain("deposit", "--asset", "USDC", "--amount", "5", "--send", "--yes", "-o", "json")
    assert deposit.code == 0, deposit.stderr
    opened = position_on_chain(sandbox.rpc_url, WALLET, USDC)
    assert opened is not None and (opened.balance, opened.deposited) == (5_000_000, 5_000_000)
