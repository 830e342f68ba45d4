"""Account reads per commitment over the served RPC, as a one-node cluster answers them: processed and
confirmed see a landed transaction at once, finalized only once it is 32 blocks deep, each read with the
`context.slot` of its level; balances, accounts, token balances and token account lists alike."""

from __future__ import annotations

import pytest
from solders.keypair import Keypair

from tests.sandbox.rpc.node import result
from yieldcli.sandbox.chain.past import AccountPast
from yieldcli.sandbox.rpc.params import API_VERSION
from yieldcli.tokens import by_symbol

SOL = 1_000_000_000
USDC = by_symbol("USDC").mint
SYSTEM = "11111111111111111111111111111111"


def _balance(url, who, level):
    answer = result(url, "getBalance", [str(who), {"commitment": level}])
    return answer["context"]["slot"], answer["value"]


def test_balance_and_account_at_each_commitment(still):
    runtime, server = still
    who = Keypair().pubkey()
    runtime.airdrop(who, 2 * SOL)
    landed = runtime.slot - 1  # the airdrop closed its slot
    finalized = runtime.commitment_slot("finalized")
    assert finalized < landed

    assert _balance(server.url, who, "processed") == (landed + 1, 2 * SOL)
    assert _balance(server.url, who, "confirmed") == (landed, 2 * SOL)
    assert _balance(server.url, who, "finalized") == (finalized, 0)
    # None named: finalized, a node's default, so a read right after a send does not see it yet.
    assert result(server.url, "getBalance", [str(who)]) == {
        "context": {"apiVersion": API_VERSION, "slot": finalized},
        "value": 0,
    }
    for method, params in [
        ("getAccountInfo", [str(who), {"encoding": "base64"}]),
        ("getMultipleAccounts", [[str(who)], {"encoding": "base64"}]),
        ("getProgramAccounts", [SYSTEM, {"encoding": "base64", "withContext": True}]),
    ]:
        answer = result(server.url, method, params)
        assert answer["context"]["slot"] == finalized, method
        assert str(who) not in str(answer["value"]), method

    info = result(server.url, "getAccountInfo", [str(who), {"commitment": "finalized", "encoding": "base64"}])
    assert info == {"context": {"apiVersion": info["context"]["apiVersion"], "slot": finalized}, "value": None}
    info = result(server.url, "getAccountInfo", [str(who), {"commitment": "confirmed", "encoding": "base64"}])
    assert info["value"]["lamports"] == 2 * SOL and info["context"]["slot"] == landed
    many = result(server.url, "getMultipleAccounts", [[str(who)], {"commitment": "finalized"}])
    assert many["value"] == [None] and many["context"]["slot"] == finalized

    # A second airdrop; then the chain moves until the first is finalized but not the second.
    runtime.airdrop(who, 3 * SOL)
    second = runtime.slot - 1
    while runtime.commitment_slot("finalized") < landed:
        runtime.advance_slots(1)
    assert landed <= runtime.commitment_slot("finalized") < second
    assert _balance(server.url, who, "finalized")[1] == 2 * SOL
    assert _balance(server.url, who, "confirmed")[1] == 5 * SOL
    while runtime.commitment_slot("finalized") < second:
        runtime.advance_slots(1)
    assert _balance(server.url, who, "finalized")[1] == 5 * SOL


def test_token_balances_and_token_accounts_at_each_commitment(still):
    runtime, server = still
    owner = Keypair()
    runtime.airdrop(owner.pubkey(), SOL)
    runtime.advance_slots(40)  # the SOL is finalized
    ata = runtime.mint_to(owner.pubkey(), _usdc(), 7_000_000)

    def token_balance(level):
        answer = result(server.url, "getTokenAccountBalance", [str(ata), {"commitment": level}])
        return answer["value"]["amount"]

    def listed(level):
        answer = result(
            server.url, "getTokenAccountsByOwner", [str(owner.pubkey()), {"mint": USDC}, {"commitment": level}]
        )
        return [entry["pubkey"] for entry in answer["value"]], answer["context"]["slot"]

    assert token_balance("confirmed") == "7000000"
    assert listed("confirmed")[0] == [str(ata)]
    assert listed("finalized") == ([], runtime.commitment_slot("finalized"))  # the account is not there yet
    runtime.advance_slots(40)
    runtime.mint_to(owner.pubkey(), _usdc(), 1_000_000)
    assert token_balance("processed") == token_balance("confirmed") == "8000000"
    assert token_balance("finalized") == "7000000"
    supply = result(server.url, "getTokenSupply", [USDC, {"commitment": "confirmed"}])["value"]["amount"]
    older = result(server.url, "getTokenSupply", [USDC, {"commitment": "finalized"}])["value"]["amount"]
    assert int(supply) - int(older) == 1_000_000
    largest = result(server.url, "getTokenLargestAccounts", [USDC, {"commitment": "finalized"}])
    assert largest["context"]["slot"] == runtime.commitment_slot("finalized")
    assert [(a["address"], a["amount"]) for a in largest["value"]] == [(str(ata), "7000000")]
    newest = result(server.url, "getTokenLargestAccounts", [USDC, {"commitment": "confirmed"}])
    assert [a["amount"] for a in newest["value"]] == ["8000000"]
    assert newest["context"]["slot"] == runtime.commitment_slot("confirmed")
    # None named: finalized, as a node answers, in every token read.
    assert result(server.url, "getTokenLargestAccounts", [USDC]) == largest
    none_named = result(server.url, "getTokenAccountBalance", [str(ata)])
    assert none_named["value"]["amount"] == "7000000"
    assert none_named["context"]["slot"] == runtime.commitment_slot("finalized")
    assert result(server.url, "getTokenSupply", [USDC])["value"]["amount"] == older
    by_owner = result(server.url, "getTokenAccountsByOwner", [str(owner.pubkey()), {"mint": USDC}])
    assert by_owner["context"]["slot"] == runtime.commitment_slot("finalized")


def _usdc():
    from solders.pubkey import Pubkey

    return Pubkey.from_string(USDC)


@pytest.mark.parametrize("reads_at", [4, 5, 9])
def test_past_rolls_back_only_changes_after_the_slot(reads_at):
    past = AccountPast()
    past.record(5, {"a": None, "b": None}, finalized=0)
    past.record(8, {"a": "a@5"}, finalized=0)  # type: ignore[dict-item]  (any value stands for an account)
    expected = {4: {"a": None, "b": None}, 5: {"a": "a@5"}, 9: {}}[reads_at]
    assert past.as_of(reads_at) == expected
    assert past.one_as_of("a", reads_at) == (("a" in expected), expected.get("a"))
    past.record(12, {}, finalized=8)  # changes at or before the finalized slot are let go
    assert past.as_of(0) == {}
