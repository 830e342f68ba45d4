"""The token metadata and token group interfaces Token-2022 serves for its own mints, executed on the
sandbox chain and read back with `jsonParsed` in a validator's shapes (agave's
parse_token/extension/token_metadata.rs and token_group.rs): a mint that points at itself for both,
its metadata written, a field added, a key removed, emitted and its authority dropped; its group made
and resized. A payload that does not decode exactly stays raw, as a validator leaves it."""

from __future__ import annotations

import asyncio
import hashlib
import struct

from solana.rpc.async_api import AsyncClient
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountParams, TransferParams, create_account, transfer

from tests.sandbox.rpc.node import r, w
from tests.sandbox.rpc.test_server_flows import kinds, parsed_tx, send
from yieldcli.sandbox.rpc.parsed import instruction
from yieldcli.solana import programs

SOL = 1_000_000_000
T22 = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
SPACE = 166 + (4 + 64) + (4 + 64)  # base, account type, metadata and group pointers


def discriminator(name: str) -> bytes:
    return hashlib.sha256(name.encode()).digest()[:8]


def borsh(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<I", len(raw)) + raw


def ix(data: bytes, *metas: AccountMeta) -> Instruction:
    return Instruction(T22, data, list(metas))


def test_token_metadata_and_group_instructions_parse_as_a_validator_parses_them(node):
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
                    ix(bytes([39, 0]) + bytes(o) + bytes(m), w(m)),  # metadata pointer: the mint itself
                    ix(bytes([40, 0]) + bytes(o) + bytes(m), w(m)),  # group pointer: the mint itself
                    ix(bytes([20, 2]) + bytes(o) + bytes([0]), w(m)),
                    transfer(TransferParams(from_pubkey=o, to_pubkey=m, lamports=SOL // 10)),  # room to grow
                ],
                [owner, mint],
            )
            written = await send(
                client,
                [
                    ix(
                        discriminator("spl_token_metadata_interface:initialize_account")
                        + borsh("Sandbox Dollar")
                        + borsh("SBD")
                        + borsh("https://example.invalid/sbd.json"),
                        w(m),
                        r(o),
                        r(m),
                        r(o, True),
                    ),
                    ix(
                        discriminator("spl_token_metadata_interface:updating_field")
                        + bytes([3])
                        + borsh("color")
                        + borsh("blue"),
                        w(m),
                        r(o, True),
                    ),
                    ix(
                        discriminator("spl_token_metadata_interface:updating_field") + bytes([1]) + borsh("SBX"),
                        w(m),
                        r(o, True),
                    ),
                    ix(
                        discriminator("spl_token_metadata_interface:remove_key_ix") + bytes([1]) + borsh("size"),
                        w(m),
                        r(o, True),
                    ),
                    ix(
                        discriminator("spl_token_metadata_interface:emitter")
                        + bytes([1])
                        + struct.pack("<Q", 4)
                        + bytes([0]),
                        r(m),
                    ),
                    ix(
                        discriminator("spl_token_group_interface:initialize_token_group")
                        + bytes(o)
                        + struct.pack("<Q", 5),
                        w(m),
                        r(m),
                        r(o, True),
                    ),
                    ix(
                        discriminator("spl_token_group_interface:update_group_max_size") + struct.pack("<Q", 9),
                        w(m),
                        r(o, True),
                    ),
                    ix(discriminator("spl_token_group_interface:update_authority") + bytes(32), w(m), r(o, True)),
                    ix(
                        discriminator("spl_token_metadata_interface:update_the_authority") + bytes(32), w(m), r(o, True)
                    ),
                ],
                [owner],
            )
            return made, written

    made, written = asyncio.run(main())
    assert parsed_tx(url, made)["meta"]["err"] is None
    tx = parsed_tx(url, written)
    assert tx["meta"]["err"] is None, tx["meta"]
    assert kinds(tx) == [
        "initializeTokenMetadata",
        "updateTokenMetadataField",
        "updateTokenMetadataField",
        "removeTokenMetadataKey",
        "emitTokenMetadata",
        "initializeTokenGroup",
        "updateTokenGroupMaxSize",
        "updateTokenGroupAuthority",
        "updateTokenMetadataAuthority",
    ]
    assert {i["program"] for i in tx["transaction"]["message"]["instructions"]} == {"spl-token-2022"}
    infos = [i["parsed"]["info"] for i in tx["transaction"]["message"]["instructions"]]
    assert infos == [
        {
            "metadata": str(m),
            "updateAuthority": str(o),
            "mint": str(m),
            "mintAuthority": str(o),
            "name": "Sandbox Dollar",
            "symbol": "SBD",
            "uri": "https://example.invalid/sbd.json",
        },
        {"metadata": str(m), "updateAuthority": str(o), "field": "color", "value": "blue"},
        {"metadata": str(m), "updateAuthority": str(o), "field": "symbol", "value": "SBX"},
        {"metadata": str(m), "updateAuthority": str(o), "key": "size", "idempotent": True},
        {"metadata": str(m), "start": 4},
        {"group": str(m), "maxSize": 5, "mint": str(m), "mintAuthority": str(o), "updateAuthority": str(o)},
        {"group": str(m), "maxSize": 9, "updateAuthority": str(o)},
        {"group": str(m), "updateAuthority": str(o), "newAuthority": None},
        {"metadata": str(m), "updateAuthority": str(o), "newAuthority": None},
    ]


def test_a_member_and_payloads_that_do_not_decode_as_a_validator_leaves_them():
    member, mint, authority, group, updater = (str(Keypair().pubkey()) for _ in range(5))
    accounts = [member, mint, authority, group, updater]
    joined = instruction(
        programs.TOKEN_2022_PROGRAM, accounts, discriminator("spl_token_group_interface:initialize_member"), 1
    )
    assert joined["parsed"] == {
        "info": {
            "member": member,
            "memberMint": mint,
            "memberMintAuthority": authority,
            "group": group,
            "groupUpdateAuthority": updater,
        },
        "type": "initializeTokenGroupMember",
    }
    emitted = discriminator("spl_token_metadata_interface:emitter") + bytes([0, 1]) + struct.pack("<Q", 2)
    assert instruction(programs.TOKEN_2022_PROGRAM, [member], emitted, 1)["parsed"]["info"] == {
        "metadata": member,
        "end": 2,
    }
    for undecodable in [
        discriminator("spl_token_metadata_interface:emitter") + bytes([0, 0, 0]),  # a byte too many
        discriminator("spl_token_group_interface:update_group_max_size") + bytes(4),  # too short
        discriminator("spl_token_metadata_interface:remove_key_ix") + bytes([2]) + borsh("k"),  # not a bool
        discriminator("spl_token_metadata_interface:unknown") + bytes(8),
    ]:
        assert "parsed" not in instruction(programs.TOKEN_2022_PROGRAM, accounts, undecodable, 1)
