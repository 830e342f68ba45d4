"""The transaction review: signers, programs, roles, lookup tables and decoded instruction details."""

from __future__ import annotations

import json
import struct

import pytest
from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.compute_budget import set_compute_unit_limit, set_compute_unit_price
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import CreateAccountParams, TransferParams, create_account, transfer
from solders.transaction import VersionedTransaction

from yieldcli.chain.tx.decode import decode_transaction, encode_transaction
from yieldcli.chain.tx.review import review_transaction
from yieldcli.solana import programs
from yieldcli.tokens import STRATEGY_PROGRAM_ID, WSOL_MINT

USER = Keypair()
PAYER = Keypair()
USDC = Pubkey.from_string("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
WSOL = Pubkey.from_string(WSOL_MINT)
TOKEN = Pubkey.from_string(programs.TOKEN_PROGRAM)
TOKEN_2022 = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
STRATEGY = Pubkey.from_string(STRATEGY_PROGRAM_ID)
BLOCKHASH = Hash.new_unique()


def unsigned(message) -> VersionedTransaction:
    return VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)


def token_ix(tag_and_data: bytes, accounts: list[tuple[Pubkey, bool, bool]], program=TOKEN) -> Instruction:
    return Instruction(program, tag_and_data, [AccountMeta(k, s, w) for k, s, w in accounts])


def details_of(review, n):
    return review.to_dict()["instructions"][n]


def test_a_deposit_like_transaction_is_fully_described():
    user = USER.pubkey()
    ata = programs.associated_token_address(user, USDC)
    vault = Pubkey.new_unique()
    wsol_ata = programs.associated_token_address(user, WSOL)
    mystery = Pubkey.new_unique()
    ixs = [
        set_compute_unit_limit(300_000),
        set_compute_unit_price(25_000),
        programs.create_associated_token_account(user, user, USDC),
        programs.token_transfer_checked(ata, USDC, vault, user, 1_500_000, 6),
        token_ix(struct.pack("<BQ", 3, 2_000_000), [(ata, False, True), (vault, False, True), (user, True, False)]),
        programs.token_mint_to(USDC, ata, user, 42),
        token_ix(struct.pack("<BQ", 8, 7), [(ata, False, True), (USDC, False, True), (user, True, False)]),
        token_ix(struct.pack("<BQ", 4, 99), [(ata, False, True), (vault, False, False), (user, True, False)]),
        programs.token_sync_native(wsol_ata),
        programs.token_close_account(wsol_ata, user, user),
        token_ix(bytes([18]) + bytes(user), [(wsol_ata, False, True), (WSOL, False, False)]),
        transfer(TransferParams(from_pubkey=user, to_pubkey=wsol_ata, lamports=2_500_000_000)),
        programs.memo("deposit 1.5 USDC", [user]),
        Instruction(Pubkey.from_string(programs.MEMO_V1_PROGRAM), b"v1 memo", []),
        Instruction(STRATEGY, bytes([1, 2, 3]), [AccountMeta(user, True, True), AccountMeta(vault, False, True)]),
        Instruction(mystery, b"\x00", [AccountMeta(user, False, False)]),
    ]
    review = review_transaction(
        unsigned(MessageV0.try_compile(user, ixs, [], BLOCKHASH)), account_mints={str(ata): str(USDC)}
    )
    d = review.to_dict()
    json.dumps(d)  # JSON-serialisable as it is

    assert d["version"] == 0
    assert d["fee_payer"] == str(user)
    assert d["recent_blockhash"] == str(BLOCKHASH)
    assert d["signers"] == [
        {"index": 0, "address": str(user), "signed": False, "invalid": False, "writable": True, "fee_payer": True}
    ]
    assert decode_transaction(d["transaction"]) == unsigned(MessageV0.try_compile(user, ixs, [], BLOCKHASH))

    names = [(ix["program"], ix["kind"]) for ix in d["instructions"]]
    assert names == [
        ("Compute Budget Program", "setComputeUnitLimit"),
        ("Compute Budget Program", "setComputeUnitPrice"),
        ("Associated Token Account Program", "createIdempotent"),
        ("Token Program", "transferChecked"),
        ("Token Program", "transfer"),
        ("Token Program", "mintTo"),
        ("Token Program", "burn"),
        ("Token Program", "approve"),
        ("Token Program", "syncNative"),
        ("Token Program", "closeAccount"),
        ("Token Program", "initializeAccount3"),
        ("System Program", "transfer"),
        ("Memo Program", "memo"),
        ("Memo Program (v1)", "memo"),
        ("Yield strategy program", None),
        ("Unknown program", None),
    ]
    assert d["instructions"][0]["details"] == {"units": 300_000}
    assert d["instructions"][1]["details"] == {"micro_lamports": 25_000}
    ata_ix = d["instructions"][2]["details"]
    assert ata_ix["wallet"] == str(user) and ata_ix["mint"] == str(USDC) and ata_ix["associatedAccount"] == str(ata)

    checked = d["instructions"][3]
    assert checked["details"] == {
        "source": str(ata),
        "mint": str(USDC),
        "destination": str(vault),
        "authority": str(user),
        "amount": 1_500_000,
        "decimals": 6,
        "ui_amount": "1.500000",
    }
    assert [a["role"] for a in checked["accounts"]] == ["source", "mint", "destination", "authority"]
    # Writability is the message's: MintTo and Burn below make the mint writable for the whole transaction.
    assert [(a["signer"], a["writable"]) for a in checked["accounts"]] == [
        (False, True),
        (False, True),
        (False, True),
        (True, True),
    ]

    plain = d["instructions"][4]["details"]
    assert plain["amount"] == 2_000_000 and plain["mint"] == str(USDC) and plain["ui_amount"] == "2.000000"
    assert (
        d["instructions"][5]["details"]["amount"] == 42 and d["instructions"][5]["details"]["ui_amount"] == "0.000042"
    )
    assert d["instructions"][6]["details"]["amount"] == 7
    assert d["instructions"][7]["details"]["delegate"] == str(vault)
    assert d["instructions"][8]["details"] == {"account": str(wsol_ata)}
    assert d["instructions"][9]["details"] == {"account": str(wsol_ata), "destination": str(user), "owner": str(user)}
    assert d["instructions"][10]["details"] == {"account": str(wsol_ata), "mint": WSOL_MINT, "owner": str(user)}
    assert d["instructions"][11]["details"] == {"lamports": 2_500_000_000, "sol": "2.500000000"}
    assert d["instructions"][12]["details"] == {"text": "deposit 1.5 USDC", "text_escaped": "deposit 1.5 USDC"}
    assert d["instructions"][13]["details"] == {"text": "v1 memo", "text_escaped": "v1 memo"}

    strategy = d["instructions"][14]
    assert strategy["program_id"] == STRATEGY_PROGRAM_ID and strategy["unknown"] is False
    unknown = d["instructions"][15]
    assert unknown["unknown"] is True and unknown["program_id"] == str(mystery)
    assert review.has_unknown_programs
    assert any(str(mystery) in w for w in review.warnings)


def test_transfer_without_known_mint_keeps_the_exact_amount_only():
    src, dst, owner = Pubkey.new_unique(), Pubkey.new_unique(), USER.pubkey()
    big = 2**64 - 1
    ix = token_ix(struct.pack("<BQ", 3, big), [(src, False, True), (dst, False, True), (owner, True, False)])
    d = details_of(review_transaction(unsigned(MessageV0.try_compile(owner, [ix], [], BLOCKHASH))), 0)
    assert d["details"]["amount"] == big
    assert "ui_amount" not in d["details"]


def test_token_2022_and_supplied_decimals():
    mint = Pubkey.new_unique()
    src, dst, owner = Pubkey.new_unique(), Pubkey.new_unique(), USER.pubkey()
    ixs = [
        programs.token_transfer_checked(src, mint, dst, owner, 123_456_789, 9, token_program=TOKEN_2022),
        programs.token_mint_to(mint, dst, owner, 5, token_program=TOKEN_2022),
        token_ix(bytes([26, 1]), [(dst, False, True)], program=TOKEN_2022),  # an extension instruction
    ]
    review = review_transaction(unsigned(MessageV0.try_compile(owner, ixs, [], BLOCKHASH)), decimals={str(mint): 9})
    d = review.to_dict()["instructions"]
    assert d[0]["program"] == "Token-2022 Program" and d[0]["details"]["ui_amount"] == "0.123456789"
    assert d[1]["details"]["ui_amount"] == "0.000000005"
    assert d[2]["kind"] == "transferFeeExtension" and d[2]["unknown"] is False  # named, its data not decoded


def test_system_create_account_and_malformed_data():
    payer, new = USER.pubkey(), Keypair()
    ixs = [
        create_account(
            CreateAccountParams(from_pubkey=payer, to_pubkey=new.pubkey(), lamports=2_039_280, space=165, owner=TOKEN)
        ),
        Instruction(Pubkey.from_string(programs.SYSTEM_PROGRAM), b"\x02\x00", [AccountMeta(payer, True, True)]),
    ]
    review = review_transaction(unsigned(MessageV0.try_compile(payer, ixs, [], BLOCKHASH)))
    d = review.to_dict()
    assert d["instructions"][0]["details"] == {
        "lamports": 2_039_280,
        "sol": "0.002039280",
        "space": 165,
        "owner": programs.TOKEN_PROGRAM,
    }
    assert [a["role"] for a in d["instructions"][0]["accounts"]] == ["funding", "newAccount"]
    assert d["instructions"][1]["kind"] is None
    assert any("instruction 1" in w and "System Program" in w for w in review.warnings)
    assert [s["address"] for s in d["signers"]] == [str(payer), str(new.pubkey())]


def test_lookup_table_accounts_resolved_or_shown_by_table_and_index():
    user = USER.pubkey()
    table = Pubkey.new_unique()
    dest = [Pubkey.new_unique() for _ in range(3)]
    readonly_program = Pubkey.new_unique()
    alt = AddressLookupTableAccount(table, [dest[0], dest[1], readonly_program, dest[2]])
    ixs = [transfer(TransferParams(from_pubkey=user, to_pubkey=d, lamports=1_000_000)) for d in dest]
    ixs.append(Instruction(STRATEGY, b"", [AccountMeta(readonly_program, False, False)]))
    tx = unsigned(MessageV0.try_compile(user, ixs, [alt], BLOCKHASH))

    unresolved = review_transaction(tx).to_dict()
    assert (
        unresolved["lookup_tables"][0]["address"] == str(table) and unresolved["lookup_tables"][0]["resolved"] is False
    )
    to = unresolved["instructions"][0]["accounts"][1]
    assert (
        to["address"] is None
        and to["lookup_table"] == str(table)
        and to["lookup_index"] == 0
        and to["writable"] is True
    )
    ro = unresolved["instructions"][3]["accounts"][0]
    assert ro["lookup_index"] == 2 and ro["writable"] is False
    assert any("not resolved" in w for w in unresolved["warnings"])

    for tables in ({str(table): [str(a) for a in alt.addresses]}, [alt]):
        resolved = review_transaction(tx, lookup_tables=tables).to_dict()
        assert [ix["accounts"][1]["address"] for ix in resolved["instructions"][:3]] == [str(d) for d in dest]
        assert resolved["instructions"][3]["accounts"][0]["address"] == str(readonly_program)
        assert resolved["lookup_tables"][0]["resolved"] is True
        assert not resolved["warnings"]


def test_signer_states_and_legacy_messages():
    user, payer = USER.pubkey(), PAYER.pubkey()
    ix = Instruction(STRATEGY, b"x", [AccountMeta(user, True, True)])
    message = Message.new_with_blockhash([ix], payer, BLOCKHASH)
    signed_by_payer = VersionedTransaction.populate(message, [PAYER.sign_message(bytes(message)), Signature.default()])
    review = review_transaction(signed_by_payer)
    assert review.version == "legacy"
    assert [(s.address, s.signed, s.invalid, s.fee_payer) for s in review.signers] == [
        (str(payer), True, False, True),
        (str(user), False, False, False),
    ]
    assert review.unsigned_signers == (str(user),)

    forged = VersionedTransaction.populate(message, [PAYER.sign_message(bytes(message)), USER.sign_message(b"other")])
    assert [(s.signed, s.invalid) for s in review_transaction(forged).signers] == [(True, False), (False, True)]


def test_associated_account_not_matching_its_wallet_and_mint_is_warned():
    user = USER.pubkey()
    ix = programs.create_associated_token_account(user, user, USDC)
    wrong = Instruction(
        ix.program_id, ix.data, [ix.accounts[0], AccountMeta(Pubkey.new_unique(), False, True), *ix.accounts[2:]]
    )
    review = review_transaction(unsigned(MessageV0.try_compile(user, [wrong], [], BLOCKHASH)))
    assert any("not the one derived" in w for w in review.warnings)


def test_lookup_table_program_instructions_are_decoded():
    user = USER.pubkey()
    create, table = programs.create_lookup_table(user, user, 1234)
    extend = programs.extend_lookup_table(table, user, user, [USDC, WSOL])
    d = review_transaction(unsigned(MessageV0.try_compile(user, [create, extend], [], BLOCKHASH))).to_dict()
    assert (
        d["instructions"][0]["kind"] == "createLookupTable" and d["instructions"][0]["details"]["recent_slot"] == 1234
    )
    assert d["instructions"][1]["details"] == {"addresses": [str(USDC), WSOL_MINT]}


@pytest.mark.parametrize("decimals,raw,text", [(6, 1, "0.000001"), (9, 10**9, "1.000000000"), (0, 5, "5")])
def test_ui_amounts_are_exact_decimal_text(decimals, raw, text):
    mint = Pubkey.new_unique()
    src, dst, owner = Pubkey.new_unique(), Pubkey.new_unique(), USER.pubkey()
    ix = programs.token_transfer_checked(src, mint, dst, owner, raw, decimals)
    d = details_of(review_transaction(unsigned(MessageV0.try_compile(owner, [ix], [], BLOCKHASH))), 0)
    assert d["details"]["ui_amount"] == text


def test_review_keeps_the_exact_base64_it_was_given():
    tx = unsigned(MessageV0.try_compile(USER.pubkey(), [programs.memo("hi")], [], BLOCKHASH))
    assert review_transaction(tx).transaction == encode_transaction(tx)
