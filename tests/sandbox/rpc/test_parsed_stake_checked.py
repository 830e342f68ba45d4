"""The Stake program's checked, lockup and later instructions with `jsonParsed`, in a validator's shapes
(agave's parse_stake): initializeChecked, authorizeChecked, setLockup, setLockupChecked and
getMinimumDelegation run by the Stake program on the sandbox chain and read back; those a vote-less
one-node cluster cannot run (the seeded authorizations, deactivateDelinquent, redelegate, moveStake,
moveLamports) parsed from data encoded here in the program's bincode layouts."""

from __future__ import annotations

import asyncio
import struct

from solana.rpc.async_api import AsyncClient
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountParams, create_account

from tests.sandbox.rpc.node import r, w
from tests.sandbox.rpc.test_server_flows import kinds, parsed_tx, send
from yieldcli.sandbox.rpc.parsed import instruction
from yieldcli.sandbox.rpc.parsed_stake import STAKE_PROGRAM

SOL = 1_000_000_000
STAKE = Pubkey.from_string(STAKE_PROGRAM)
CLOCK = Pubkey.from_string("SysvarC1ock11111111111111111111111111111111")
RENT = Pubkey.from_string("SysvarRent111111111111111111111111111111111")


def test_checked_and_lockup_instructions_run_and_parse_as_a_validator_parses_them(node):
    runtime, server = node
    url = server.url
    owner, stake, staker, custodian, other = Keypair(), Keypair(), Keypair(), Keypair(), Keypair()
    o, s = owner.pubkey(), stake.pubkey()
    runtime.airdrop(o, 10 * SOL)

    async def main():
        async with AsyncClient(url) as client:
            rent = (await client.get_minimum_balance_for_rent_exemption(200)).value
            made = await send(
                client,
                [
                    create_account(
                        CreateAccountParams(from_pubkey=o, to_pubkey=s, lamports=rent + SOL, space=200, owner=STAKE)
                    ),
                    Instruction(STAKE, struct.pack("<I", 9), [w(s), r(RENT), r(o), r(o, True)]),  # initializeChecked
                ],
                [owner, stake],
            )
            changed = await send(
                client,
                [
                    # authorizeChecked: a new staker, who signs too
                    Instruction(
                        STAKE, struct.pack("<II", 10, 0), [w(s), r(CLOCK), r(o, True), r(staker.pubkey(), True)]
                    ),
                    # setLockup: a timestamp and a custodian, the epoch left as it is
                    Instruction(
                        STAKE,
                        struct.pack("<IBqB", 6, 1, 0, 0) + bytes([1]) + bytes(custodian.pubkey()),
                        [w(s), r(o, True)],
                    ),
                    # setLockupChecked: the epoch, and another custodian who signs
                    Instruction(STAKE, struct.pack("<IBBQ", 12, 0, 1, 0), [w(s), r(o, True), r(other.pubkey(), True)]),
                    Instruction(STAKE, struct.pack("<I", 13), []),  # getMinimumDelegation
                ],
                [owner, staker, other],
            )
            return made, changed

    made, changed = asyncio.run(main())
    first = parsed_tx(url, made)
    assert first["meta"]["err"] is None and kinds(first) == ["createAccount", "initializeChecked"]
    assert first["transaction"]["message"]["instructions"][1]["parsed"]["info"] == {
        "stakeAccount": str(s),
        "rentSysvar": str(RENT),
        "staker": str(o),
        "withdrawer": str(o),
    }
    second = parsed_tx(url, changed)
    assert second["meta"]["err"] is None, second["meta"]
    assert kinds(second) == ["authorizeChecked", "setLockup", "setLockupChecked", "getMinimumDelegation"]
    authorized, lockup, checked, minimum = (i["parsed"] for i in second["transaction"]["message"]["instructions"])
    assert authorized["info"] == {
        "stakeAccount": str(s),
        "authorityType": "Staker",
        "clockSysvar": str(CLOCK),
        "authority": str(o),
        "newAuthority": str(staker.pubkey()),
    }
    assert lockup["info"] == {
        "stakeAccount": str(s),
        "custodian": str(o),
        "lockup": {"unixTimestamp": 0, "custodian": str(custodian.pubkey())},
    }
    assert checked["info"] == {
        "stakeAccount": str(s),
        "custodian": str(o),
        "lockup": {"epoch": 0, "custodian": str(other.pubkey())},
    }
    assert minimum == {"type": "getMinimumDelegation"}  # a null info is left out, as a validator serializes it


def parse(accounts: list[str], data: bytes) -> dict:
    found = instruction(STAKE_PROGRAM, accounts, data, 1)
    assert "parsed" in found, found
    return found["parsed"]


def seed(text: str) -> bytes:
    return struct.pack("<Q", len(text)) + text.encode()


def test_the_instructions_a_one_node_cluster_cannot_run_parse_as_a_validator_parses_them():
    stake, base, new, owner, custodian, vote, other = (Keypair().pubkey() for _ in range(7))
    s, b, n, c, v, x = str(stake), str(base), str(new), str(custodian), str(vote), str(other)
    with_seed = struct.pack("<I", 8) + bytes(new) + struct.pack("<I", 1) + seed("stake:0") + bytes(owner)
    assert parse([s, b, str(CLOCK), c], with_seed) == {
        "info": {
            "stakeAccount": s,
            "authorityBase": b,
            "newAuthorized": n,
            "authorityType": "Withdrawer",
            "authoritySeed": "stake:0",
            "authorityOwner": str(owner),
            "clockSysvar": str(CLOCK),
            "custodian": c,
        },
        "type": "authorizeWithSeed",
    }
    checked_seed = struct.pack("<II", 11, 0) + seed("s") + bytes(owner)
    assert parse([s, b, n], checked_seed) == {
        "info": {
            "stakeAccount": s,
            "authorityBase": b,
            "authorityType": "Staker",
            "authoritySeed": "s",
            "authorityOwner": str(owner),
            "newAuthorized": n,
        },
        "type": "authorizeCheckedWithSeed",
    }
    assert parse([s, v, x], struct.pack("<I", 14)) == {
        "info": {"stakeAccount": s, "voteAccount": v, "referenceVoteAccount": x},
        "type": "deactivateDelinquent",
    }
    assert parse([s, x, v, c, b], struct.pack("<I", 15)) == {
        "info": {
            "stakeAccount": s,
            "newStakeAccount": x,
            "voteAccount": v,
            "stakeConfigAccount": c,
            "stakeAuthority": b,
        },
        "type": "redelegate",
    }
    for tag, kind in [(16, "moveStake"), (17, "moveLamports")]:
        assert parse([s, x, b], struct.pack("<IQ", tag, 5 * SOL)) == {
            "info": {"source": s, "destination": x, "stakeAuthority": b, "lamports": 5 * SOL},
            "type": kind,
        }
    assert parse([s, b, n], struct.pack("<I", 9)) == {  # initializeChecked without the rent sysvar
        "info": {"stakeAccount": s, "staker": b, "withdrawer": n},
        "type": "initializeChecked",
    }
    # Too few accounts for the layout, as a validator checks: left raw.
    for accounts, data in [([s, str(CLOCK), b], struct.pack("<II", 10, 0)), ([s, v], struct.pack("<I", 14))]:
        assert "parsed" not in instruction(STAKE_PROGRAM, accounts, data, 1)
