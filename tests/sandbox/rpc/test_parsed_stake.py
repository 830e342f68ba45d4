"""The Stake program on the sandbox chain, read back with `jsonParsed` in a validator's shapes (agave's
parse_stake): a stake account made, initialized, its staker changed and lamports withdrawn from it, each
instruction parsed, and the account parsed as `initialized` with its meta."""

from __future__ import annotations

import asyncio
import struct

from solana.rpc.async_api import AsyncClient
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountParams, create_account

from tests.sandbox.rpc.node import result
from tests.sandbox.rpc.test_server_flows import kinds, parsed_tx, send
from yieldcli.sandbox.rpc.parsed_stake import STAKE_PROGRAM, account

SOL = 1_000_000_000
STAKE = Pubkey.from_string(STAKE_PROGRAM)
CLOCK = Pubkey.from_string("SysvarC1ock11111111111111111111111111111111")
RENT = Pubkey.from_string("SysvarRent111111111111111111111111111111111")
HISTORY = Pubkey.from_string("SysvarStakeHistory1111111111111111111111111")


def test_stake_instructions_and_account_parse_as_a_validator_parses_them(node):
    runtime, server = node
    url = server.url
    owner, stake, staker, custodian = Keypair(), Keypair(), Keypair(), Keypair()
    o, s = owner.pubkey(), stake.pubkey()
    runtime.airdrop(o, 10 * SOL)

    async def main():
        async with AsyncClient(url) as client:
            rent = (await client.get_minimum_balance_for_rent_exemption(200)).value
            lockup = struct.pack("<qQ", 0, 0) + bytes(custodian.pubkey())
            made = await send(
                client,
                [
                    create_account(
                        CreateAccountParams(from_pubkey=o, to_pubkey=s, lamports=rent + SOL, space=200, owner=STAKE)
                    ),
                    Instruction(
                        STAKE,
                        struct.pack("<I", 0) + bytes(o) + bytes(o) + lockup,
                        [AccountMeta(s, False, True), AccountMeta(RENT, False, False)],
                    ),
                ],
                [owner, stake],
            )
            changed = await send(
                client,
                [
                    Instruction(  # authorize: a new staker (legacy layout, with the clock)
                        STAKE,
                        struct.pack("<I", 1) + bytes(staker.pubkey()) + struct.pack("<I", 0),
                        [AccountMeta(s, False, True), AccountMeta(CLOCK, False, False), AccountMeta(o, True, False)],
                    ),
                    Instruction(  # withdraw half a SOL to the owner
                        STAKE,
                        struct.pack("<IQ", 4, SOL // 2),
                        [
                            AccountMeta(s, False, True),
                            AccountMeta(o, False, True),
                            AccountMeta(CLOCK, False, False),
                            AccountMeta(HISTORY, False, False),
                            AccountMeta(o, True, False),
                        ],
                    ),
                ],
                [owner],
            )
            return made, changed, rent

    made, changed, rent = asyncio.run(main())
    first = parsed_tx(url, made)
    assert first["meta"]["err"] is None and kinds(first) == ["createAccount", "initialize"]
    init = first["transaction"]["message"]["instructions"][1]
    assert init["program"] == "stake" and init["parsed"]["info"] == {
        "stakeAccount": str(s),
        "authorized": {"staker": str(o), "withdrawer": str(o)},
        "lockup": {"unixTimestamp": 0, "epoch": 0, "custodian": str(custodian.pubkey())},
        "rentSysvar": str(RENT),
    }
    second = parsed_tx(url, changed)
    assert second["meta"]["err"] is None and kinds(second) == ["authorize", "withdraw"]
    authorize, withdraw = (i["parsed"]["info"] for i in second["transaction"]["message"]["instructions"])
    assert authorize == {
        "stakeAccount": str(s),
        "newAuthority": str(staker.pubkey()),
        "authorityType": "Staker",
        "clockSysvar": str(CLOCK),
        "authority": str(o),
    }
    assert withdraw == {
        "stakeAccount": str(s),
        "destination": str(o),
        "lamports": SOL // 2,
        "clockSysvar": str(CLOCK),
        "stakeHistorySysvar": str(HISTORY),
        "withdrawAuthority": str(o),
    }
    read = result(url, "getAccountInfo", [str(s), {"encoding": "jsonParsed", "commitment": "confirmed"}])["value"]
    assert read["lamports"] == rent + SOL // 2
    assert read["data"] == {
        "program": "stake",
        "parsed": {
            "type": "initialized",
            "info": {
                "meta": {
                    "rentExemptReserve": str(rent),
                    "authorized": {"staker": str(staker.pubkey()), "withdrawer": str(o)},
                    "lockup": {"unixTimestamp": 0, "epoch": 0, "custodian": str(custodian.pubkey())},
                },
                "stake": None,
            },
        },
        "space": 200,
    }


def test_a_delegated_stake_account_parses_with_its_delegation():
    """A one-node cluster here has no vote account to delegate to: the delegated state is built as the
    program writes it (StakeStateV2::Stake, bincode) and parsed."""
    voter, who = Keypair().pubkey(), Keypair().pubkey()
    meta = struct.pack("<Q", 42) + bytes(who) + bytes(who) + struct.pack("<qQ", 0, 1) + bytes(Pubkey.default())
    stake = bytes(voter) + struct.pack("<QQQdQ", 20, 2, 2**64 - 1, 0.25, 10)
    data = struct.pack("<I", 2) + meta + stake + b"\x00" + bytes(3)
    assert len(data) == 200
    parsed = account(data)
    assert parsed is not None and parsed["type"] == "delegated"
    assert parsed["info"]["stake"] == {
        "delegation": {"voter": str(voter), "stake": "20", "activationEpoch": "2", "deactivationEpoch": str(2**64 - 1)},
        "creditsObserved": 10,
    }
    assert account(struct.pack("<I", 0) + bytes(196)) == {"type": "uninitialized"}
