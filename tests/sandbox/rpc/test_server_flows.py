"""Flows of a Solana developer's own against the sandbox, sent and confirmed with solana-py's
AsyncClient and read back in `jsonParsed` as a validator parses it: an SPL token mint, transfer,
approve, freeze and thaw; return data; a v0 transaction through a lookup table made here; a durable
nonce; Token-2022 extensions; what stays raw."""

from __future__ import annotations

import asyncio
import base64
import struct

from solana.rpc.async_api import AsyncClient
from solana.rpc.commitment import Confirmed
from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.system_program import (
    CreateAccountParams,
    TransferParams,
    create_account,
    create_nonce_account,
    transfer,
)
from solders.transaction import VersionedTransaction
from spl.token import instructions as spl
from spl.token import models

from tests.sandbox.rpc.node import result
from yieldcli.sandbox.chain.clock import FINALITY_DEPTH

SOL = 1_000_000_000
TOKEN = spl.TOKEN_PROGRAM_ID
ALT = Pubkey.from_string("AddressLookupTab1e1111111111111111111111111")
SYSTEM = Pubkey.from_string("11111111111111111111111111111111")
COMPUTE_BUDGET = Pubkey.from_string("ComputeBudget111111111111111111111111111111")


async def send(client: AsyncClient, ixs: list[Instruction], signers: list[Keypair], *, lookups=(), blockhash=None):
    """Sign, send and confirm (at confirmed) a legacy transaction, or a v0 one when `lookups` are given."""
    payer = signers[0].pubkey()
    recent = blockhash or (await client.get_latest_blockhash(Confirmed)).value.blockhash
    if lookups:
        message = MessageV0.try_compile(payer, ixs, list(lookups), recent)
    else:
        message = Message.new_with_blockhash(ixs, payer, recent)
    signature = (await client.send_transaction(VersionedTransaction(message, signers))).value
    await client.confirm_transaction(signature, Confirmed, sleep_seconds=0.05)
    return str(signature)


def parsed_tx(url: str, signature: str) -> dict:
    config = {"encoding": "jsonParsed", "commitment": "confirmed", "maxSupportedTransactionVersion": 0}
    return result(url, "getTransaction", [signature, config])


def parsed_account(url: str, address: Pubkey) -> dict:
    config = {"encoding": "jsonParsed", "commitment": "confirmed"}
    return result(url, "getAccountInfo", [str(address), config])["value"]


def kinds(tx: dict) -> list:
    return [
        ix.get("parsed", {}).get("type") if "parsed" in ix else None
        for ix in tx["transaction"]["message"]["instructions"]
    ]


def test_spl_token_mint_transfer_approve_freeze_and_return_data(node):
    runtime, server = node
    url = server.url
    owner, friend, spender, mint = Keypair(), Keypair(), Keypair(), Keypair()
    runtime.airdrop(owner.pubkey(), 10 * SOL)

    async def main():
        async with AsyncClient(url) as client:
            rent = (await client.get_minimum_balance_for_rent_exemption(82)).value
            source = spl.get_associated_token_address(owner.pubkey(), mint.pubkey())
            target = spl.get_associated_token_address(friend.pubkey(), mint.pubkey())
            made = await send(
                client,
                [
                    create_account(
                        CreateAccountParams(
                            from_pubkey=owner.pubkey(), to_pubkey=mint.pubkey(), lamports=rent, space=82, owner=TOKEN
                        )
                    ),
                    spl.initialize_mint2(
                        models.InitializeMint2Params(
                            decimals=2,
                            program_id=TOKEN,
                            mint=mint.pubkey(),
                            mint_authority=owner.pubkey(),
                            freeze_authority=owner.pubkey(),
                        )
                    ),
                    spl.create_associated_token_account(owner.pubkey(), owner.pubkey(), mint.pubkey()),
                    spl.create_associated_token_account(owner.pubkey(), friend.pubkey(), mint.pubkey()),
                    spl.mint_to(
                        models.MintToParams(
                            program_id=TOKEN,
                            mint=mint.pubkey(),
                            dest=source,
                            mint_authority=owner.pubkey(),
                            amount=10_000,
                        )
                    ),
                ],
                [owner, mint],
            )
            moved = await send(
                client,
                [
                    spl.transfer_checked(
                        models.TransferCheckedParams(
                            program_id=TOKEN,
                            source=source,
                            mint=mint.pubkey(),
                            dest=target,
                            owner=owner.pubkey(),
                            amount=2_500,
                            decimals=2,
                        )
                    ),
                    spl.approve(
                        models.ApproveParams(
                            program_id=TOKEN,
                            source=source,
                            delegate=spender.pubkey(),
                            owner=owner.pubkey(),
                            amount=1_000,
                        )
                    ),
                    spl.freeze_account(
                        models.FreezeAccountParams(
                            program_id=TOKEN, account=target, mint=mint.pubkey(), authority=owner.pubkey()
                        )
                    ),
                ],
                [owner],
            )
            frozen = parsed_account(url, target)
            thawed = await send(
                client,
                [
                    spl.thaw_account(
                        models.ThawAccountParams(
                            program_id=TOKEN, account=target, mint=mint.pubkey(), authority=owner.pubkey()
                        )
                    )
                ],
                [owner],
            )
            # GetAccountDataSize returns the size of an account of the mint: return data.
            size = spl.get_account_data_size(models.GetAccountDataSizeParams(program_id=TOKEN, mint=mint.pubkey()))
            blockhash = (await client.get_latest_blockhash(Confirmed)).value.blockhash
            trial = VersionedTransaction(Message.new_with_blockhash([size], owner.pubkey(), blockhash), [owner])
            simulated = result(
                url, "simulateTransaction", [base64.b64encode(bytes(trial)).decode(), {"encoding": "base64"}]
            )["value"]
            sized = await send(client, [size], [owner])
            return source, target, made, moved, frozen, thawed, simulated, sized

    source, target, made, moved, frozen, thawed, simulated, sized = asyncio.run(main())
    assert kinds(parsed_tx(url, made)) == ["createAccount", "initializeMint2", "create", "create", "mintTo"]
    init = parsed_tx(url, made)["transaction"]["message"]["instructions"][1]["parsed"]["info"]
    assert init == {
        "mint": str(mint.pubkey()),
        "decimals": 2,
        "mintAuthority": str(owner.pubkey()),
        "freezeAuthority": str(owner.pubkey()),
    }
    inner = parsed_tx(url, made)["meta"]["innerInstructions"]
    inner_kinds = {ix["parsed"]["type"] for entry in inner for ix in entry["instructions"] if "parsed" in ix}
    assert {"getAccountDataSize", "initializeImmutableOwner", "initializeAccount3"} <= inner_kinds
    assert kinds(parsed_tx(url, moved)) == ["transferChecked", "approve", "freezeAccount"]
    assert kinds(parsed_tx(url, thawed)) == ["thawAccount"]
    assert frozen["data"]["parsed"]["info"]["state"] == "frozen" and frozen["rentEpoch"] == 2**64 - 1
    held = parsed_account(url, source)["data"]["parsed"]["info"]
    assert held["tokenAmount"]["amount"] == "7500" and held["delegate"] == str(spender.pubkey())
    assert held["delegatedAmount"]["amount"] == "1000"
    minted = parsed_account(url, mint.pubkey())["data"]
    assert minted["parsed"]["type"] == "mint" and minted["parsed"]["info"]["supply"] == "10000"
    assert "extensions" not in minted["parsed"]["info"]
    # Return data, in a simulation and in the transaction's meta: a u64 165 from the Token program, its
    # trailing zero bytes cut off as a validator records it.
    returned = {
        "programId": str(TOKEN),
        "data": [base64.b64encode(struct.pack("<Q", 165).rstrip(b"\0")).decode(), "base64"],
    }
    assert simulated["returnData"] == returned and simulated["innerInstructions"] is None
    assert parsed_tx(url, sized)["meta"]["returnData"] == returned
    assert "returnData" not in parsed_tx(url, thawed)["meta"]  # none set: a validator leaves the field out
    asked = result(
        url, "simulateTransaction", [simulated_bytes(runtime, owner), {"encoding": "base64", "innerInstructions": True}]
    )["value"]
    assert asked["innerInstructions"] == []


def simulated_bytes(runtime, owner: Keypair) -> str:
    blockhash = Hash.from_string(runtime.latest_blockhash()[0])
    ix = transfer(TransferParams(from_pubkey=owner.pubkey(), to_pubkey=Keypair().pubkey(), lamports=SOL // 10))
    return base64.b64encode(
        bytes(VersionedTransaction(Message.new_with_blockhash([ix], owner.pubkey(), blockhash), [owner]))
    ).decode()


def alt_create(authority: Pubkey, payer: Pubkey, slot: int) -> tuple[Instruction, Pubkey]:
    table, bump = Pubkey.find_program_address([bytes(authority), struct.pack("<Q", slot)], ALT)
    metas = [
        AccountMeta(table, False, True),
        AccountMeta(authority, False, False),
        AccountMeta(payer, True, True),
        AccountMeta(SYSTEM, False, False),
    ]
    return Instruction(ALT, struct.pack("<IQB", 0, slot, bump), metas), table


def alt_extend(table: Pubkey, authority: Pubkey, payer: Pubkey, addresses: list[Pubkey]) -> Instruction:
    data = struct.pack("<IQ", 2, len(addresses)) + b"".join(bytes(a) for a in addresses)
    metas = [
        AccountMeta(table, False, True),
        AccountMeta(authority, True, False),
        AccountMeta(payer, True, True),
        AccountMeta(SYSTEM, False, False),
    ]
    return Instruction(ALT, data, metas)


def test_a_v0_transaction_through_a_lookup_table_made_here_and_a_durable_nonce(node):
    runtime, server = node
    url = server.url
    payer, nonce = Keypair(), Keypair()
    friends = [Keypair().pubkey() for _ in range(3)]
    runtime.airdrop(payer.pubkey(), 10 * SOL)

    async def main():
        async with AsyncClient(url) as client:
            slot = (await client.get_slot(Confirmed)).value
            create, table = alt_create(payer.pubkey(), payer.pubkey(), slot)
            created = await send(client, [create], [payer])
            extended = await send(client, [alt_extend(table, payer.pubkey(), payer.pubkey(), friends)], [payer])
            await asyncio.sleep(0.1)  # a table is usable from the slot after its extension
            lookup = AddressLookupTableAccount(table, friends)
            pays = [
                transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=f, lamports=SOL // 100)) for f in friends
            ]
            through = await send(client, pays, [payer], lookups=[lookup])
            # A durable nonce: made, then used after every recent blockhash has expired.
            rent = (await client.get_minimum_balance_for_rent_exemption(80)).value
            made = await send(
                client, create_nonce_account(payer.pubkey(), nonce.pubkey(), payer.pubkey(), rent), [payer, nonce]
            )
            return table, created, extended, through, made

    table, created, extended, through, made = asyncio.run(main())
    assert kinds(parsed_tx(url, created)) == ["createLookupTable"]
    extend = parsed_tx(url, extended)["transaction"]["message"]["instructions"][0]["parsed"]
    assert extend["type"] == "extendLookupTable" and extend["info"]["newAddresses"] == [str(f) for f in friends]
    account = parsed_account(url, table)["data"]
    assert account["program"] == "address-lookup-table" and account["parsed"]["type"] == "lookupTable"
    info = account["parsed"]["info"]
    assert info["addresses"] == [str(f) for f in friends] and info["authority"] == str(payer.pubkey())
    assert info["deactivationSlot"] == str(2**64 - 1)
    v0 = parsed_tx(url, through)
    assert v0["version"] == 0 and v0["meta"]["err"] is None and kinds(v0) == ["transfer"] * 3
    keys = v0["transaction"]["message"]["accountKeys"]
    assert sorted(k["pubkey"] for k in keys if k["source"] == "lookupTable") == sorted(str(f) for f in friends)
    assert kinds(parsed_tx(url, made)) == ["createAccount", "initializeNonce"]
    held = parsed_account(url, nonce.pubkey())["data"]["parsed"]
    assert held["type"] == "initialized" and held["info"]["authority"] == str(payer.pubkey())

    runtime.advance_slots(runtime.blockhash_window + 1)  # every recent blockhash is gone

    async def use_nonce():
        async with AsyncClient(url) as client:
            advance = Instruction(
                SYSTEM,
                struct.pack("<I", 4),
                [
                    AccountMeta(nonce.pubkey(), False, True),
                    AccountMeta(Pubkey.from_string("SysvarRecentB1ockHashes11111111111111111111"), False, False),
                    AccountMeta(payer.pubkey(), True, False),
                ],
            )
            pay = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=Keypair().pubkey(), lamports=SOL // 10))
            blockhash = Hash.from_string(held["info"]["blockhash"])
            return await send(client, [advance, pay], [payer], blockhash=blockhash)

    used = parsed_tx(url, asyncio.run(use_nonce()))
    assert used["meta"]["err"] is None and kinds(used) == ["advanceNonce", "transfer"]
    assert parsed_account(url, nonce.pubkey())["data"]["parsed"]["info"]["blockhash"] != held["info"]["blockhash"]


def test_token_2022_extensions_and_what_stays_raw(node):
    runtime, server = node
    url = server.url
    owner = Keypair()
    runtime.airdrop(owner.pubkey(), 10 * SOL)
    mint = runtime.create_token_2022_mint(6)  # with a metadata pointer to itself
    account = runtime.mint_to(owner.pubkey(), mint, 1_000)
    runtime.advance_slots(FINALITY_DEPTH + 1)
    minted = parsed_account(url, mint)["data"]["parsed"]["info"]
    assert minted["extensions"] == [
        {
            "extension": "metadataPointer",
            "state": {"authority": minted["mintAuthority"], "metadataAddress": str(mint)},
        }
    ]
    held = parsed_account(url, account)["data"]
    assert held["program"] == "spl-token-2022" and held["parsed"]["info"]["extensions"] == [
        {"extension": "immutableOwner"}
    ]

    async def main():
        async with AsyncClient(url) as client:
            price = Instruction(COMPUTE_BUDGET, bytes([3]) + struct.pack("<Q", 1), [])
            memo = Instruction(
                Pubkey.from_string("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"),
                b"kept",
                [AccountMeta(owner.pubkey(), True, False)],
            )
            return await send(client, [price, memo], [owner])

    tx = parsed_tx(url, asyncio.run(main()))
    raw, memo = tx["transaction"]["message"]["instructions"]
    # The Compute Budget program is not one a validator parses: partially decoded, as there.
    assert raw == {"programId": str(COMPUTE_BUDGET), "accounts": [], "data": raw["data"], "stackHeight": None}
    assert memo == {"program": "spl-memo", "programId": memo["programId"], "parsed": "kept", "stackHeight": None}
