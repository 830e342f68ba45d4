"""The sandbox RPC's ledger and search methods, answered as a validator answers them: blocks per slot,
transactions in every encoding, signatures by address, account filters and encodings, token searches,
the one-node cluster's facts, and the errors for what cannot be answered. Each answer is parsed by
solders (what solana-py reads with) where it has a parser, so a wrong shape fails here."""

from __future__ import annotations

import base64
import json
import subprocess
import urllib.request

import pytest
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.rpc import responses
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from yieldcli.addresses import b58encode
from yieldcli.sandbox.chain.clock import FINALITY_DEPTH
from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.runtime import Runtime
from yieldcli.solana import programs

USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
SOL = 1_000_000_000


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    """A chain with a legacy SOL transfer and memo, a v0 token transfer with a delegate set, served."""
    runtime = Runtime(tmp_path_factory.mktemp("ledger") / "chain.json")
    server = RpcServer(runtime).start()
    user, friend, spender = Keypair(), Keypair().pubkey(), Keypair().pubkey()
    runtime.airdrop(user.pubkey(), 10 * SOL)
    source = runtime.mint_to(user.pubkey(), USDC, 7_000_000)
    blockhash = runtime.latest_blockhash()[0]
    legacy = Message.new_with_blockhash(
        [
            transfer(TransferParams(from_pubkey=user.pubkey(), to_pubkey=friend, lamports=SOL)),
            programs.memo("ledger memo", [user.pubkey()]),
        ],
        user.pubkey(),
        Hash.from_string(blockhash),
    )
    sol_tx = VersionedTransaction(legacy, [user])
    sol = runtime.send_transaction(sol_tx).record
    approve = Instruction(
        Pubkey.from_string(programs.TOKEN_PROGRAM),
        bytes([4]) + (1_500_000).to_bytes(8, "little"),
        [
            AccountMeta(source, False, True),
            AccountMeta(spender, False, False),
            AccountMeta(user.pubkey(), True, False),
        ],
    )
    target = programs.associated_token_address(friend, USDC)
    v0 = MessageV0.try_compile(
        user.pubkey(),
        [
            programs.create_associated_token_account(user.pubkey(), friend, USDC),
            programs.token_transfer_checked(source, USDC, target, user.pubkey(), 2_000_000, 6),
            approve,
        ],
        [],
        Hash.from_string(runtime.latest_blockhash()[0]),
    )
    token = runtime.send_transaction(VersionedTransaction(v0, [user])).record
    assert sol is not None and token is not None and sol.err is None and token.err is None
    runtime.advance_slots(FINALITY_DEPTH + 1)  # finalized: what getBlock and its kin serve by default
    yield {
        "url": server.url,
        "runtime": runtime,
        "user": user.pubkey(),
        "friend": friend,
        "spender": spender,
        "source": source,
        "target": target,
        "sol": sol,
        "token": token,
    }
    server.stop()


def call(url: str, method: str, params: list | None = None) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params or []}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def parsed(url: str, method: str, params: list, resp_type):
    """The answer as solders parses it for solana-py (raises on a shape it does not accept)."""
    answer = call(url, method, params)
    assert "error" not in answer, answer
    return resp_type.from_json(json.dumps(answer)), answer["result"]


def test_blocks_hold_the_transactions_of_their_slot(ledger):
    url, sol, token = ledger["url"], ledger["sol"], ledger["token"]
    block, raw = parsed(url, "getBlock", [token.slot, {"maxSupportedTransactionVersion": 0}], responses.GetBlockResp)
    assert [str(t.transaction.signatures[0]) for t in block.value.transactions] == [token.signature]
    assert raw["parentSlot"] == token.slot - 1 and raw["rewards"] == []
    before, _ = parsed(url, "getBlock", [token.slot - 1, {"maxSupportedTransactionVersion": 0}], responses.GetBlockResp)
    # Chained: a block's previousBlockhash is the hash of the block before it.
    assert str(before.value.blockhash) == raw["previousBlockhash"]
    # The transaction in slot s was built on the blockhash of block s - 1, as on a cluster.
    assert raw["transactions"][0]["transaction"]["message"]["recentBlockhash"] == str(before.value.blockhash)
    signatures = call(url, "getBlock", [sol.slot, {"transactionDetails": "signatures"}])["result"]
    assert signatures["signatures"] == [sol.signature] and "transactions" not in signatures
    accounts = call(url, "getBlock", [sol.slot, {"transactionDetails": "accounts"}])["result"]
    keys = accounts["transactions"][0]["transaction"]["accountKeys"]
    assert keys[0] == {"pubkey": str(ledger["user"]), "signer": True, "source": "transaction", "writable": True}
    assert "logMessages" not in accounts["transactions"][0]["meta"]
    blocks = call(url, "getBlocks", [sol.slot - 1, token.slot])["result"]
    assert blocks == list(range(sol.slot - 1, token.slot + 1))
    assert call(url, "getBlocksWithLimit", [sol.slot, 2])["result"] == [sol.slot, sol.slot + 1]
    assert call(url, "getBlockTime", [token.slot])["result"] == token.block_time


def test_what_a_block_cannot_be(ledger):
    url, token = ledger["url"], ledger["token"]
    v0 = call(url, "getBlock", [token.slot])["error"]
    assert v0["code"] == -32015 and "maxSupportedTransactionVersion" in v0["message"]
    future = call(url, "getBlock", [token.slot + 10_000])["error"]
    assert future == {"code": -32004, "message": f"Block not available for slot {token.slot + 10_000}"}
    # The ledger starts at the genesis block, slot 0, as a test validator's.
    assert call(url, "getFirstAvailableBlock")["result"] == 0 and call(url, "minimumLedgerSlot")["result"] == 0
    genesis = call(url, "getBlock", [0])["result"]
    assert genesis["parentSlot"] == 0 and genesis["blockHeight"] == 0 and genesis["transactions"] == []
    processed = call(url, "getBlock", [token.slot, {"commitment": "processed"}])["error"]
    assert processed["code"] == -32602 and "below `confirmed`" in processed["message"]
    assert call(url, "getBlocks", [0, 600_000])["error"]["message"] == "Slot range too large; max 500000"
    bad = call(url, "getBlock", [token.slot, {"encoding": "yaml", "maxSupportedTransactionVersion": 0}])["error"]
    assert bad["code"] == -32602 and "unknown variant `yaml`" in bad["message"]


def test_a_transaction_in_every_encoding(ledger):
    url, sol, token = ledger["url"], ledger["sol"], ledger["token"]
    raw = base64.b64decode(token.transaction)
    answers = {}
    for encoding in ("json", "jsonParsed", "base58", "base64"):
        got, answers[encoding] = parsed(
            url,
            "getTransaction",
            [token.signature, {"encoding": encoding, "maxSupportedTransactionVersion": 0}],
            responses.GetTransactionResp,
        )
        assert got.value.slot == token.slot and answers[encoding]["version"] == 0
    assert answers["base64"]["transaction"] == [token.transaction, "base64"]
    assert answers["base58"]["transaction"] == [b58encode(raw), "base58"]
    message = answers["json"]["transaction"]["message"]
    assert message["accountKeys"][0] == str(ledger["user"]) and message["addressTableLookups"] == []
    assert message["header"]["numRequiredSignatures"] == 1
    instructions = answers["jsonParsed"]["transaction"]["message"]["instructions"]
    assert [i["parsed"]["type"] for i in instructions] == ["createIdempotent", "transferChecked", "approve"]
    assert instructions[1]["parsed"]["info"]["tokenAmount"]["amount"] == "2000000"
    assert instructions[2]["parsed"]["info"] == {
        "source": str(ledger["source"]),
        "delegate": str(ledger["spender"]),
        "owner": str(ledger["user"]),
        "amount": "1500000",
    }
    inner = answers["jsonParsed"]["meta"]["innerInstructions"]
    assert inner and inner[0]["index"] == 0 and all("programId" in i for i in inner[0]["instructions"])
    assert "loadedAddresses" not in answers["jsonParsed"]["meta"]
    # Legacy, asked without a version: no `version` in the answer, as a validator answers.
    legacy = call(url, "getTransaction", [sol.signature, "json"])["result"]
    assert "version" not in legacy and legacy["meta"]["logMessages"] == sol.logs
    unknown = call(url, "getTransaction", [b58encode(bytes(64)), {"maxSupportedTransactionVersion": 0}])
    assert unknown["result"] is None


def test_signatures_for_address_newest_first_with_memos(ledger):
    url, sol, token = ledger["url"], ledger["sol"], ledger["token"]
    got, raw = parsed(url, "getSignaturesForAddress", [str(ledger["user"])], responses.GetSignaturesForAddressResp)
    listed = [r["signature"] for r in raw]
    assert listed[:2] == [token.signature, sol.signature] and len(got.value) == len(raw)
    assert raw[1]["memo"] == "[11] ledger memo" and raw[0]["memo"] is None
    assert raw[1]["blockTime"] == sol.block_time and raw[1]["confirmationStatus"] == "finalized"
    assert [
        r["signature"] for r in call(url, "getSignaturesForAddress", [str(ledger["user"]), {"limit": 1}])["result"]
    ] == [token.signature]
    after = call(url, "getSignaturesForAddress", [str(ledger["user"]), {"before": token.signature}])["result"]
    assert after[0]["signature"] == sol.signature
    until = call(url, "getSignaturesForAddress", [str(ledger["user"]), {"until": sol.signature}])["result"]
    assert [r["signature"] for r in until] == [token.signature]
    friend = call(url, "getSignaturesForAddress", [str(ledger["friend"])])["result"]
    assert [r["signature"] for r in friend] == [token.signature, sol.signature]
    assert call(url, "getSignaturesForAddress", [str(ledger["user"]), {"limit": 1001}])["error"]["code"] == -32602


def test_program_accounts_filters_and_token_searches(ledger):
    url, user, source = ledger["url"], str(ledger["user"]), str(ledger["source"])
    owned = [{"dataSize": 165}, {"memcmp": {"offset": 32, "bytes": user}}]
    got, raw = parsed(
        url,
        "getProgramAccounts",
        [programs.TOKEN_PROGRAM, {"encoding": "base64", "filters": owned}],
        responses.GetProgramAccountsResp,
    )
    assert [r["pubkey"] for r in raw] == [source]
    by_mint_b64 = {"memcmp": {"offset": 0, "bytes": base64.b64encode(bytes(USDC)).decode(), "encoding": "base64"}}
    everyone = call(
        url, "getProgramAccounts", [programs.TOKEN_PROGRAM, {"encoding": "base64", "filters": [by_mint_b64]}]
    )
    assert {source, str(ledger["target"])} <= {r["pubkey"] for r in everyone["result"]}
    wrapped = call(
        url,
        "getProgramAccounts",
        [programs.TOKEN_PROGRAM, {"encoding": "base64", "filters": owned, "withContext": True}],
    )
    assert set(wrapped["result"]) == {"context", "value"}
    too_many = call(url, "getProgramAccounts", [programs.TOKEN_PROGRAM, {"filters": [{"dataSize": 1}] * 5}])["error"]
    assert too_many == {"code": -32602, "message": "Too many filters provided; max 4"}
    long_base58 = call(url, "getProgramAccounts", [programs.TOKEN_PROGRAM, {"filters": owned}])["error"]
    assert "less than 128 bytes" in long_base58["message"]

    supply, raw_supply = parsed(url, "getTokenSupply", [str(USDC)], responses.GetTokenSupplyResp)
    assert raw_supply["value"]["amount"] == "7000000" and raw_supply["value"]["decimals"] == 6
    _, largest = parsed(url, "getTokenLargestAccounts", [str(USDC)], responses.GetTokenLargestAccountsResp)
    assert [(a["address"], a["amount"]) for a in largest["value"]] == [
        (source, "5000000"),
        (str(ledger["target"]), "2000000"),
    ]
    _, delegated = parsed(
        url,
        "getTokenAccountsByDelegate",
        [str(ledger["spender"]), {"mint": str(USDC)}, {"encoding": "jsonParsed"}],
        responses.GetTokenAccountsByDelegateJsonParsedResp,
    )
    (only,) = delegated["value"]
    info = only["account"]["data"]["parsed"]["info"]
    assert only["pubkey"] == source and info["delegate"] == str(ledger["spender"])
    assert info["delegatedAmount"]["amount"] == "1500000" and info["tokenAmount"]["amount"] == "5000000"
    assert call(url, "getTokenSupply", [user])["error"]["code"] == -32602


def test_account_encodings(ledger):
    url, source = ledger["url"], str(ledger["source"])
    plain = call(url, "getAccountInfo", [source, {"encoding": "base64"}])["result"]["value"]
    data = base64.b64decode(plain["data"][0])
    zstd, raw = parsed(url, "getAccountInfo", [source, {"encoding": "base64+zstd"}], responses.GetAccountInfoResp)
    assert bytes(zstd.value.data) == data and raw["value"]["data"][1] == "base64+zstd"
    # An independent decoder reads the frame too, when the zstd tool is there to ask.
    unpacked = subprocess.run(
        ["zstd", "-d", "-c"], input=base64.b64decode(raw["value"]["data"][0]), capture_output=True, check=False
    )
    assert unpacked.returncode != 0 or unpacked.stdout == data
    mint = call(url, "getAccountInfo", [str(USDC), {"encoding": "jsonParsed"}])["result"]["value"]["data"]
    assert mint["program"] == "spl-token" and mint["parsed"]["type"] == "mint"
    assert mint["parsed"]["info"]["supply"] == "7000000" and mint["space"] == 82
    system = call(url, "getAccountInfo", [str(ledger["user"]), {"encoding": "jsonParsed"}])["result"]["value"]
    assert system["data"] == ["", "base64"]  # nothing to parse: base64, as a validator falls back
    sliced = call(url, "getAccountInfo", [source, {"encoding": "base58", "dataSlice": {"offset": 0, "length": 32}}])
    assert sliced["result"]["value"]["data"] == [b58encode(bytes(USDC)), "base58"]


def test_commitment_and_min_context_slot_are_checked_everywhere(ledger):
    url = ledger["url"]
    slot = call(url, "getSlot")["result"]
    late = call(url, "getBalance", [str(ledger["user"]), {"minContextSlot": slot + 1_000}])["error"]
    assert late["code"] == -32016 and late["message"] == "Minimum context slot has not been reached"
    assert late["data"]["contextSlot"] >= slot
    assert call(url, "getBalance", [str(ledger["user"]), {"minContextSlot": slot}])["result"]["value"] > 0
    wrong = call(url, "getAccountInfo", [str(ledger["user"]), {"commitment": "eventually"}])["error"]
    assert wrong["code"] == -32602 and "unknown variant `eventually`" in wrong["message"]
    assert call(url, "getLatestBlockhash", [{"commitment": None, "minContextSlot": None}])["result"]["value"]


def test_the_one_node_clusters_facts(ledger):
    url, runtime = ledger["url"], ledger["runtime"]
    identity, _ = parsed(url, "getIdentity", [], responses.GetIdentityResp)
    nodes, raw_nodes = parsed(url, "getClusterNodes", [], responses.GetClusterNodesResp)
    port = int(url.rsplit(":", 1)[1])
    assert [n["pubkey"] for n in raw_nodes] == [str(identity.value.identity)]
    assert raw_nodes[0]["rpc"] == f"127.0.0.1:{port}" and raw_nodes[0]["pubsub"] == f"127.0.0.1:{port + 1}"
    votes, raw_votes = parsed(url, "getVoteAccounts", [], responses.GetVoteAccountsResp)
    assert [v["nodePubkey"] for v in raw_votes["current"]] == [str(identity.value.identity)] and not raw_votes[
        "delinquent"
    ]
    schedule, _ = parsed(url, "getEpochSchedule", [], responses.GetEpochScheduleResp)
    epoch = call(url, "getEpochInfo")["result"]
    assert schedule.value.slots_per_epoch == epoch["slotsInEpoch"]
    parsed(url, "getInflationGovernor", [], responses.GetInflationGovernorResp)
    rate, _ = parsed(url, "getInflationRate", [], responses.GetInflationRateResp)
    assert rate.value.epoch == epoch["epoch"]
    parsed(url, "getStakeMinimumDelegation", [], responses.GetStakeMinimumDelegationResp)
    supply, raw_supply = parsed(url, "getSupply", [], responses.GetSupplyResp)
    largest, raw_largest = parsed(url, "getLargestAccounts", [], responses.GetLargestAccountsResp)
    lamports = [a["lamports"] for a in raw_largest["value"]]
    assert lamports == sorted(lamports, reverse=True) and raw_supply["value"]["total"] >= sum(lamports)
    count, _ = parsed(url, "getTransactionCount", [], responses.GetTransactionCountResp)
    history = runtime.history()
    assert count.value == history.transactions >= len(history.records)
    assert call(url, "getEpochInfo")["result"]["transactionCount"] == count.value
    samples, raw_samples = parsed(url, "getRecentPerformanceSamples", [3], responses.GetRecentPerformanceSamplesResp)
    assert 1 <= len(raw_samples) <= 3 and sum(s["numTransactions"] for s in raw_samples) >= 2
    leaders = call(url, "getSlotLeaders", [epoch["absoluteSlot"], 4])["result"]
    assert leaders == [str(identity.value.identity)] * 4
    assert call(url, "getHighestSnapshotSlot")["error"]["code"] == -32008


def test_first_block_and_transaction_count_survive_a_restart(ledger, tmp_path):
    runtime = Runtime(tmp_path / "chain.json")
    runtime.airdrop(Keypair().pubkey(), SOL)
    before = runtime.history()
    again = Runtime(tmp_path / "chain.json").history()
    assert (again.first_block, again.transactions) == (before.first_block, before.transactions)
    assert again.by_slot == before.by_slot
