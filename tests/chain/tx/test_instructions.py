"""From the service's `/ix` JSON to an unsigned v0 transaction: strict parsing, lookup table, blockhash."""

from __future__ import annotations

import asyncio
import struct

import pytest
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature

from yieldcli.chain.rpc.types import AccountInfo, LatestBlockhash
from yieldcli.chain.tx.instructions import (
    build_from_ix,
    build_transaction,
    fetch_lookup_table,
    parse_instruction,
    parse_ix_response,
)
from yieldcli.errors import ExitCode, ServiceError
from yieldcli.solana import programs as p
from yieldcli.tokens import STRATEGY_PROGRAM_ID

USER = Keypair().pubkey()
VAULT = Pubkey.new_unique()
STRATEGY = Pubkey.from_string(STRATEGY_PROGRAM_ID)
TABLE = Pubkey.new_unique()
BLOCKHASH = Hash.new_unique()


def ints(key: Pubkey) -> list[int]:
    return list(bytes(key))


def ix_json(program=STRATEGY, accounts=None, data=(1, 2, 3)):
    accounts = (
        accounts
        if accounts is not None
        else [
            {"pubkey": ints(USER), "is_signer": True, "is_writable": True},
            {"pubkey": ints(VAULT), "is_signer": False, "is_writable": True},
        ]
    )
    return {"program_id": ints(program), "accounts": accounts, "data": list(data)}


def alt_data(addresses: list[Pubkey], authority: Pubkey | None = USER) -> bytes:
    # ProgramState::LookupTable: u32 tag 1, deactivation slot, last extended slot and index,
    # optional authority, 2 bytes of padding (56 bytes), then the addresses.
    meta = struct.pack("<IQQB", 1, 2**64 - 1, 10, 0)
    meta += (b"\x01" + bytes(authority)) if authority else b"\x00" + bytes(32)
    meta += b"\x00\x00"
    return meta + b"".join(bytes(a) for a in addresses)


class FakeRpc:
    def __init__(self, accounts: dict[Pubkey, AccountInfo] | None = None):
        self.accounts = accounts or {}
        self.calls: list[str] = []

    async def account_info(self, address, *, commitment=None):
        self.calls.append(f"account_info {address}")
        return self.accounts.get(address)

    async def latest_blockhash(self, commitment=None):
        self.calls.append("latest_blockhash")
        return LatestBlockhash(BLOCKHASH, 1_150, 1_000)


def table_account(addresses, owner=p.ADDRESS_LOOKUP_TABLE_PROGRAM, data=None):
    return AccountInfo(
        TABLE, 1_000_000, Pubkey.from_string(owner), data if data is not None else alt_data(addresses), False, 0
    )


def test_parse_instruction():
    ix = parse_instruction(ix_json())
    assert ix.program_id == STRATEGY
    assert [(m.pubkey, m.is_signer, m.is_writable) for m in ix.accounts] == [(USER, True, True), (VAULT, False, True)]
    assert ix.data == bytes([1, 2, 3])


def test_extra_fields_are_tolerated():
    obj = ix_json()
    obj["comment"] = "new upstream field"
    obj["accounts"][0]["name"] = "user"
    assert parse_instruction(obj).program_id == STRATEGY


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda o: o.update(program_id=o["program_id"][:31]), "program_id must have exactly 32 integers, got 31"),
        (lambda o: o["program_id"].append(0), "program_id must have exactly 32 integers, got 33"),
        (lambda o: o["program_id"].__setitem__(5, 256), r"program_id\[5\] must be an integer 0..255, got 256"),
        (lambda o: o["program_id"].__setitem__(0, True), r"program_id\[0\] must be an integer 0..255, got True"),
        (lambda o: o.update(program_id=str(STRATEGY)), "program_id must be an array of integers, got str"),
        (lambda o: o["accounts"][1]["pubkey"].__setitem__(3, -1), r"accounts\[1\].pubkey\[3\] must be an integer"),
        (lambda o: o["accounts"][0].pop("is_writable"), r"accounts\[0\] has no is_writable"),
        (lambda o: o["accounts"][0].update(is_signer="yes"), r"accounts\[0\].is_signer must be true or false"),
        (lambda o: o.update(accounts={}), "accounts must be an array"),
        (lambda o: o.update(data=[1, 2.5]), r"data\[1\] must be an integer 0..255, got 2.5"),
        (lambda o: o.pop("data"), "has no data"),
    ],
)
def test_strict_validation(mutate, message):
    obj = ix_json()
    mutate(obj)
    with pytest.raises(ServiceError, match=message) as info:
        parse_ix_response({"deposit_instructions": [ix_json(), obj], "lookup_table": ""})
    assert "deposit_instructions[1]" in info.value.message
    assert info.value.exit_code == ExitCode.SERVICE


def test_response_shapes():
    for key in ("deposit_instructions", "withdraw_instructions", "close_user_fund_instructions"):
        instructions, table = parse_ix_response({key: [ix_json()]})
        assert len(instructions) == 1 and table is None
    _, table = parse_ix_response({"withdraw_instructions": [ix_json()], "lookup_table": str(TABLE)})
    assert table == TABLE
    with pytest.raises(ServiceError, match="invalid lookup_table"):
        parse_ix_response({"withdraw_instructions": [ix_json()], "lookup_table": "not-an-address"})
    with pytest.raises(ServiceError, match="none of"):
        parse_ix_response({"message": "hi"})
    with pytest.raises(ServiceError, match="no instructions"):
        parse_ix_response({"deposit_instructions": []})


def test_build_transaction_uses_the_lookup_table():
    extra = [Pubkey.new_unique() for _ in range(3)]
    rpc = FakeRpc({TABLE: table_account([VAULT, *extra])})
    body = {
        "deposit_instructions": [
            ix_json(
                accounts=[
                    {"pubkey": ints(USER), "is_signer": True, "is_writable": True},
                    *({"pubkey": ints(k), "is_signer": False, "is_writable": True} for k in [VAULT, *extra]),
                ]
            )
        ],
        "lookup_table": str(TABLE),
    }
    built = asyncio.run(build_from_ix(rpc, body, USER))
    tx = built.transaction
    assert isinstance(tx.message, MessageV0)
    assert tx.message.recent_blockhash == BLOCKHASH
    assert built.last_valid_block_height == 1_150
    assert tx.signatures == [Signature.default()]
    assert tx.message.account_keys[0] == USER
    assert VAULT not in tx.message.account_keys  # loaded from the table instead
    (lookup,) = tx.message.address_table_lookups
    assert lookup.account_key == TABLE and sorted(lookup.writable_indexes) == [0, 1, 2, 3]
    assert built.lookup_tables[0].addresses == [VAULT, *extra]
    assert rpc.calls == [f"account_info {TABLE}", "latest_blockhash"]


def test_build_without_table_reads_no_account():
    rpc = FakeRpc()
    built = asyncio.run(build_from_ix(rpc, {"close_user_fund_instructions": [ix_json()]}, USER))
    assert built.transaction.message.address_table_lookups == []
    assert rpc.calls == ["latest_blockhash"]


def test_lookup_table_problems():
    with pytest.raises(ServiceError, match="does not exist on this cluster") as info:
        asyncio.run(fetch_lookup_table(FakeRpc(), TABLE))
    # The library names no flag: the hint that names --url comes from the command line's table, by kind.
    from yieldcli.cli import cli_errors

    assert info.value.hint is None and "--url" in cli_errors.hint_for(info.value)
    with pytest.raises(ServiceError, match="is not an address lookup table"):
        asyncio.run(fetch_lookup_table(FakeRpc({TABLE: table_account([], owner=p.SYSTEM_PROGRAM)}), TABLE))
    with pytest.raises(ServiceError, match="malformed"):
        asyncio.run(fetch_lookup_table(FakeRpc({TABLE: table_account([], data=b"\x01\x02")}), TABLE))


def test_build_transaction_payer_first_and_empty_slots():
    other = Keypair().pubkey()
    ix = parse_instruction(
        ix_json(
            accounts=[
                {"pubkey": ints(other), "is_signer": True, "is_writable": False},
                {"pubkey": ints(USER), "is_signer": True, "is_writable": True},
            ]
        )
    )
    tx = build_transaction([ix], USER, BLOCKHASH)
    assert tx.message.account_keys[:2] == [USER, other]
    assert tx.signatures == [Signature.default(), Signature.default()]
