"""Token-2022's confidential transfer and confidential transfer fee instructions with `jsonParsed`, in a
validator's shapes (agave's parse_token/extension/confidential_transfer.rs and
confidential_transfer_fee.rs). A mint's confidential set-up runs on the sandbox chain and is read back
over the served RPC; the instructions that need zero-knowledge proofs to run are parsed as the RPC
parses them, from data encoded here in the program's layouts."""

from __future__ import annotations

import asyncio
import base64
import struct

from solana.rpc.async_api import AsyncClient
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountParams, create_account

from tests.sandbox.rpc.node import r, w
from tests.sandbox.rpc.test_server_flows import kinds, parsed_tx, send
from yieldcli.sandbox.rpc.parsed import instruction
from yieldcli.solana import programs

SOL = 1_000_000_000
T22 = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
SYSVAR_INSTRUCTIONS = "Sysvar1nstructions1111111111111111111111111"
SPACE = 166 + (4 + 108) + (4 + 65) + (4 + 129)  # transfer fee, confidential mint, confidential fee
AUDITOR = bytes(range(1, 33))  # an ElGamal public key's 32 bytes (not checked when set)
WITHHELD = bytes(range(33, 65))
BALANCE = bytes(range(100, 136))  # a decryptable balance (AeCiphertext), 36 bytes


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_a_confidential_mint_set_up_on_chain_parses_as_a_validator_parses_it(node):
    runtime, server = node
    url = server.url
    owner, mint = Keypair(), Keypair()
    o, m = owner.pubkey(), mint.pubkey()
    runtime.airdrop(o, 10 * SOL)

    async def main():
        async with AsyncClient(url) as client:
            rent = (await client.get_minimum_balance_for_rent_exemption(SPACE)).value
            made = await send(
                client,
                [
                    create_account(
                        CreateAccountParams(from_pubkey=o, to_pubkey=m, lamports=rent, space=SPACE, owner=T22)
                    ),
                    Instruction(
                        T22, bytes([26, 0, 1]) + bytes(o) + bytes([1]) + bytes(o) + struct.pack("<HQ", 50, 7), [w(m)]
                    ),
                    Instruction(T22, bytes([27, 0]) + bytes(o) + bytes([1]) + bytes(32), [w(m)]),  # no auditor
                    Instruction(T22, bytes([37, 0]) + bytes(32) + WITHHELD, [w(m)]),  # no authority
                    Instruction(T22, bytes([20, 2]) + bytes(o) + bytes([0]), [w(m)]),
                ],
                [owner, mint],
            )
            updated = await send(client, [Instruction(T22, bytes([27, 1, 0]) + AUDITOR, [w(m), r(o, True)])], [owner])
            return made, updated

    made, updated = asyncio.run(main())
    tx = parsed_tx(url, made)
    assert tx["meta"]["err"] is None
    assert kinds(tx)[2:4] == ["initializeConfidentialTransferMint", "initializeConfidentialTransferFeeConfig"]
    confidential, fee = (i["parsed"]["info"] for i in tx["transaction"]["message"]["instructions"][2:4])
    assert confidential == {
        "mint": str(m),
        "autoApproveNewAccounts": True,
        "auditorElGamalPubkey": None,
        "authority": str(o),
    }
    assert fee == {"mint": str(m), "withdrawWithheldAuthorityElGamalPubkey": b64(WITHHELD)}
    tx = parsed_tx(url, updated)
    assert tx["meta"]["err"] is None
    assert tx["transaction"]["message"]["instructions"][0]["parsed"] == {
        "info": {
            "mint": str(m),
            "confidentialTransferMintAuthority": str(o),
            "autoApproveNewAccounts": False,
            "auditorElGamalPubkey": b64(AUDITOR),
        },
        "type": "updateConfidentialTransferMint",
    }


def parse(accounts: list[str], data: bytes) -> dict:
    found = instruction(programs.TOKEN_2022_PROGRAM, accounts, data, 1)
    assert "parsed" in found, found
    return found["parsed"]


def keys(count: int) -> list[str]:
    return [str(Keypair().pubkey()) for _ in range(count)]


def test_the_account_instructions_that_need_proofs_parse_as_a_validator_parses_them():
    account, mint, context, owner, record, signer = keys(6)
    configure = bytes([27, 2]) + BALANCE + struct.pack("<Qb", 65_536, 0)
    assert parse([account, mint, context, owner], configure) == {
        "info": {
            "account": account,
            "mint": mint,
            "decryptableZeroBalance": b64(BALANCE),
            "maximumPendingBalanceCreditCounter": 65_536,
            "proofInstructionOffset": 0,
            "proofContextStateAccount": context,
            "owner": owner,
        },
        "type": "configureConfidentialTransferAccount",
    }
    from_record = bytes([27, 2]) + BALANCE + struct.pack("<Qb", 8, 1)
    assert parse([account, mint, SYSVAR_INSTRUCTIONS, record, owner], from_record)["info"] == {
        "account": account,
        "mint": mint,
        "decryptableZeroBalance": b64(BALANCE),
        "maximumPendingBalanceCreditCounter": 8,
        "proofInstructionOffset": 1,
        "instructionsSysvar": SYSVAR_INSTRUCTIONS,
        "recordAccount": record,
        "owner": owner,
    }
    assert parse([account, mint, owner], bytes([27, 3])) == {
        "info": {"account": account, "mint": mint, "confidentialTransferAuditorAuthority": owner},
        "type": "approveConfidentialTransferAccount",
    }
    assert parse([account, SYSVAR_INSTRUCTIONS, owner], bytes([27, 4, 1])) == {
        "info": {
            "account": account,
            "proofInstructionOffset": 1,
            "instructionsSysvar": SYSVAR_INSTRUCTIONS,
            "owner": owner,
        },
        "type": "emptyConfidentialTransferAccount",
    }
    # agave names a deposit's accounts source, destination and mint, whatever the program calls them
    assert parse([account, mint, owner, signer], bytes([27, 5]) + struct.pack("<QB", 1_000, 6)) == {
        "info": {
            "source": account,
            "destination": mint,
            "mint": owner,
            "amount": 1_000,
            "decimals": 6,
            "owner": signer,
        },
        "type": "depositConfidentialTransfer",
    }
    applied = bytes([27, 8]) + struct.pack("<Q", 3) + BALANCE
    assert parse([account, owner, signer], applied) == {
        "info": {
            "account": account,
            "newDecryptableAvailableBalance": b64(BALANCE),
            "expectedPendingBalanceCreditCounter": 3,
            "multisigOwner": owner,
            "signers": [signer],
        },
        "type": "applyPendingConfidentialTransferBalance",
    }
    for sub, kind in [
        (9, "enableConfidentialTransferConfidentialCredits"),
        (10, "disableConfidentialTransferConfidentialCredits"),
        (11, "enableConfidentialTransferNonConfidentialCredits"),
        (12, "disableConfidentialTransferNonConfidentialCredits"),
    ]:
        assert parse([account, owner], bytes([27, sub])) == {"info": {"account": account, "owner": owner}, "type": kind}
    assert parse([account, mint, record], bytes([27, 14])) == {
        "info": {"account": account, "mint": mint, "registry": record},
        "type": "configureConfidentialAccountWithRegistry",
    }


def test_withdrawals_and_transfers_name_their_proof_accounts_as_a_validator_guesses_them():
    source, mint, destination, equality, validity, ranged, owner = keys(7)
    withdraw = bytes([27, 6]) + struct.pack("<QB", 500, 2) + BALANCE + struct.pack("<bb", 0, 0)
    assert parse([source, destination, mint, equality, ranged, owner], withdraw) == {
        "info": {
            "source": source,
            "destination": destination,
            "mint": mint,
            "amount": 500,
            "decimals": 2,
            "newDecryptableAvailableBalance": b64(BALANCE),
            "equalityProofInstructionOffset": 0,
            "rangeProofInstructionOffset": 0,
            "equalityProofAccount": equality,
            "rangeProofAccount": ranged,
            "owner": owner,
        },
        "type": "withdrawConfidentialTransfer",
    }
    moved = bytes([27, 7]) + BALANCE + struct.pack("<bbb", 1, 2, 3)
    assert parse([source, mint, destination, SYSVAR_INSTRUCTIONS, owner], moved) == {
        "info": {
            "source": source,
            "mint": mint,
            "destination": destination,
            "newSourceDecryptableAvailableBalance": b64(BALANCE),
            "equalityProofInstructionOffset": 1,
            "ciphertextValidityProofInstructionOffset": 2,
            "rangeProofInstructionOffset": 3,
            "instructionsSysvar": SYSVAR_INSTRUCTIONS,
            "owner": owner,
        },
        "type": "confidentialTransfer",
    }
    fee_sigma, fee_validity = keys(2)
    with_fee = bytes([27, 13]) + BALANCE + struct.pack("<bbbbb", 0, 0, 0, 0, 0)
    accounts = [source, mint, destination, equality, validity, fee_validity, fee_sigma, ranged, owner]
    assert parse(accounts, with_fee) == {
        "info": {
            "source": source,
            "mint": mint,
            "destination": destination,
            "newSourceDecryptableAvailableBalance": b64(BALANCE),
            "equalityProofInstructionOffset": 0,
            "transferAmountCiphertextValidityProofInstructionOffset": 0,
            "feeCiphertextValidityProofInstructionOffset": 0,
            "feeSigmaProofInstructionOffset": 0,
            "rangeProofInstructionOffset": 0,
            "equalityProofAccount": equality,
            "transferAmountCiphertextValidityProofAccount": validity,
            "feeCiphertextValidityProofAccount": fee_validity,
            "feeSigmaProofAccount": fee_sigma,
            "rangeProofAccount": ranged,
            "owner": owner,
        },
        "type": "confidentialTransferWithFee",
    }


def test_the_confidential_fee_instructions_parse_as_a_validator_parses_them():
    mint, recipient, context, authority, first, second, owner = keys(7)
    from_mint = bytes([37, 1]) + struct.pack("<b", 0) + BALANCE
    assert parse([mint, recipient, context, authority], from_mint) == {
        "info": {
            "mint": mint,
            "feeRecipient": recipient,
            "proofInstructionOffset": 0,
            "newDecryptableAvailableBalance": b64(BALANCE),
            "proofContextStateAccount": context,
            "withdrawWithheldAuthority": authority,
        },
        "type": "withdrawWithheldConfidentialTransferTokensFromMint",
    }
    from_accounts = bytes([37, 2]) + struct.pack("<Bb", 2, 1) + BALANCE
    assert parse([mint, recipient, SYSVAR_INSTRUCTIONS, authority, first, second], from_accounts) == {
        "info": {
            "mint": mint,
            "feeRecipient": recipient,
            "proofInstructionOffset": 1,
            "newDecryptableAvailableBalance": b64(BALANCE),
            "instructionsSysvar": SYSVAR_INSTRUCTIONS,
            "sourceAccounts": [first, second],
            "withdrawWithheldAuthority": authority,
        },
        "type": "withdrawWithheldConfidentialTransferTokensFromAccounts",
    }
    assert parse([mint, first, second], bytes([37, 3])) == {
        "info": {"mint": mint, "sourceAccounts": [first, second]},
        "type": "harvestWithheldConfidentialTransferTokensToMint",
    }
    assert parse([first, owner], bytes([37, 4]))["type"] == "enableConfidentialTransferFeeHarvestToMint"
    assert parse([first, owner], bytes([37, 5])) == {
        "info": {"account": first, "owner": owner},
        "type": "disableConfidentialTransferFeeHarvestToMint",
    }


def test_a_payload_of_the_wrong_length_or_too_few_accounts_stays_raw():
    account, mint = keys(2)
    for accounts, data in [
        ([account, mint, account, mint], bytes([27, 5]) + struct.pack("<Q", 1)),  # deposit without its decimals
        ([account], bytes([27, 0]) + bytes(64)),  # a byte short
        ([account, mint], bytes([27, 3])),  # approve names three accounts
        ([account], bytes([27, 15])),  # no such instruction
        ([account, mint, account], bytes([37, 2]) + struct.pack("<Bb", 2, 0) + BALANCE),  # fewer than 4 + 2
    ]:
        found = instruction(programs.TOKEN_2022_PROGRAM, accounts, data, 1)
        assert set(found) == {"programId", "accounts", "data", "stackHeight"}, data
