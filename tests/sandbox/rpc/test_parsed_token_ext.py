"""Token-2022's extension instructions, executed by the Token-2022 program on the sandbox chain and read back
with `jsonParsed` in a validator's shapes (agave's parse_token/extension): a mint made with a transfer fee,
a metadata pointer, a transfer hook and a permanent delegate; a transfer with its fee; the fee set anew;
and, parsed alone, the switches of an account's extensions (required memos, CPI guard) with a multisig."""

from __future__ import annotations

import asyncio
import struct

from solana.rpc.async_api import AsyncClient
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountParams, create_account

from tests.sandbox.rpc.node import r, result, w
from tests.sandbox.rpc.test_server_flows import kinds, parsed_tx, send
from yieldcli.solana import programs

SOL = 1_000_000_000
T22 = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
MINT_SPACE = 166 + (4 + 108) + (4 + 64) + (4 + 32) + (4 + 64)  # base, account type, then four extensions


def ix(data: bytes, *metas: AccountMeta) -> Instruction:
    return Instruction(T22, data, list(metas))


def test_extension_instructions_parse_as_a_validator_parses_them(node):
    runtime, server = node
    url = server.url
    owner, friend, mint, delegate = Keypair(), Keypair(), Keypair(), Keypair()
    o, m = owner.pubkey(), mint.pubkey()
    runtime.airdrop(o, 10 * SOL)
    source = programs.associated_token_address(o, m, T22)
    target = programs.associated_token_address(friend.pubkey(), m, T22)

    async def main():
        async with AsyncClient(url) as client:
            rent = (await client.get_minimum_balance_for_rent_exemption(MINT_SPACE)).value
            made = await send(
                client,
                [
                    create_account(
                        CreateAccountParams(from_pubkey=o, to_pubkey=m, lamports=rent, space=MINT_SPACE, owner=T22)
                    ),
                    # initializeTransferFeeConfig: both authorities (COption), 50 basis points, at most 7 units.
                    ix(bytes([26, 0, 1]) + bytes(o) + bytes([1]) + bytes(o) + struct.pack("<HQ", 50, 7), w(m)),
                    ix(bytes([39, 0]) + bytes(o) + bytes(m), w(m)),  # metadata pointer to the mint itself
                    ix(bytes([36, 0]) + bytes(o) + bytes(32), w(m)),  # transfer hook: an authority, no program
                    ix(bytes([35]) + bytes(delegate.pubkey()), w(m)),  # permanent delegate
                    ix(bytes([20, 2]) + bytes(o) + bytes([0]), w(m)),  # initializeMint2
                    programs.create_associated_token_account(o, o, m, token_program=T22),
                    programs.create_associated_token_account(o, friend.pubkey(), m, token_program=T22),
                    ix(bytes([7]) + struct.pack("<Q", 100_000), w(m), w(source), r(o, True)),
                ],
                [owner, mint],
            )
            moved = await send(
                client,
                [
                    # transferCheckedWithFee: 10,000 at 2 decimals, fee min(50 bp, 7) = 7.
                    ix(bytes([26, 1]) + struct.pack("<QBQ", 10_000, 2, 7), w(source), r(m), w(target), r(o, True)),
                    ix(bytes([26, 5]) + struct.pack("<HQ", 25, 9), w(m), r(o, True)),  # setTransferFee
                    ix(bytes([39, 1]) + bytes(32), w(m), r(o, True)),  # the metadata pointer cleared
                ],
                [owner],
            )
            return made, moved

    made, moved = asyncio.run(main())
    first = parsed_tx(url, made)
    assert first["meta"]["err"] is None
    parsed = first["transaction"]["message"]["instructions"]
    assert kinds(first)[1:6] == [
        "initializeTransferFeeConfig",
        "initializeMetadataPointer",
        "initializeTransferHook",
        "initializePermanentDelegate",
        "initializeMint2",
    ]
    assert parsed[1]["program"] == "spl-token-2022"
    assert parsed[1]["parsed"]["info"] == {
        "mint": str(m),
        "transferFeeBasisPoints": 50,
        "maximumFee": 7,
        "transferFeeConfigAuthority": str(o),
        "withdrawWithheldAuthority": str(o),
    }
    assert parsed[2]["parsed"]["info"] == {"mint": str(m), "authority": str(o), "metadataAddress": str(m)}
    assert parsed[3]["parsed"]["info"] == {"mint": str(m), "authority": str(o)}  # no program: left out
    assert parsed[4]["parsed"]["info"] == {"mint": str(m), "delegate": str(delegate.pubkey())}

    second = parsed_tx(url, moved)
    assert second["meta"]["err"] is None
    assert kinds(second) == [
        "transferCheckedWithFee",
        "setTransferFee",
        "updateMetadataPointer",
    ]
    fee_move, new_fee, cleared = (i["parsed"]["info"] for i in second["transaction"]["message"]["instructions"])
    assert fee_move == {
        "source": str(source),
        "mint": str(m),
        "destination": str(target),
        "tokenAmount": {"amount": "10000", "decimals": 2, "uiAmount": 100.0, "uiAmountString": "100"},
        "feeAmount": {"amount": "7", "decimals": 2, "uiAmount": 0.07, "uiAmountString": "0.07"},
        "authority": str(o),
    }
    assert new_fee == {
        "mint": str(m),
        "transferFeeBasisPoints": 25,
        "maximumFee": 9,
        "transferFeeConfigAuthority": str(o),
    }
    assert cleared == {"mint": str(m), "authority": str(o)}
    held = result(url, "getTokenAccountBalance", [str(target), {"commitment": "confirmed"}])["value"]
    assert held["amount"] == "9993"  # the fee is withheld in the recipient's account


def test_account_switches_and_multisig_signers_as_a_validator_names_them():
    from yieldcli.sandbox.rpc.parsed import instruction

    account, owner, signer = (str(Keypair().pubkey()) for _ in range(3))
    memos = instruction(programs.TOKEN_2022_PROGRAM, [account, owner], bytes([30, 1]), 1)
    assert memos["parsed"] == {"info": {"account": account, "owner": owner}, "type": "disableRequiredMemoTransfers"}
    guard = instruction(programs.TOKEN_2022_PROGRAM, [account, owner, signer], bytes([34, 0]), 1)
    assert guard["parsed"] == {
        "info": {"account": account, "multisigOwner": owner, "signers": [signer]},
        "type": "enableCpiGuard",
    }
    frozen = instruction(programs.TOKEN_2022_PROGRAM, [account], bytes([28, 0, 2]), 1)
    assert frozen["parsed"] == {
        "info": {"mint": account, "accountState": "frozen"},
        "type": "initializeDefaultAccountState",
    }
    raw = instruction(
        programs.TOKEN_2022_PROGRAM, [account], bytes([42, 0]) + bytes(64), 1
    )  # confidential mint-burn: raw
    assert set(raw) == {"programId", "accounts", "data", "stackHeight"}
