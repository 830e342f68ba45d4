"""Token-2022's interest-bearing, pausable and scaled-UI-amount mints and `reallocate`, executed by the
Token-2022 program on the sandbox chain and read back with `jsonParsed` in a validator's shapes
(agave's parse_token/extension: interest_bearing_mint.rs, pausable.rs, scaled_ui_amount.rs,
reallocate.rs), multisig signers and the f64 multiplier as Rust writes it included."""

from __future__ import annotations

import asyncio
import struct

import pytest
from solana.rpc.async_api import AsyncClient
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountParams, create_account

from tests.sandbox.rpc.node import r, w
from tests.sandbox.rpc.test_server_flows import kinds, parsed_tx, send
from yieldcli.sandbox.rpc.parsed import instruction
from yieldcli.sandbox.rpc.parsed_token_ext import _f64
from yieldcli.solana import programs

SOL = 1_000_000_000
T22 = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
SYSTEM = Pubkey.from_string(programs.SYSTEM_PROGRAM)
INTEREST_AND_PAUSE = 166 + (4 + 52) + (4 + 33)
SCALED = 166 + (4 + 56)


def ix(data: bytes, *metas: AccountMeta) -> Instruction:
    return Instruction(T22, data, list(metas))


def _infos(url: str, signature: str) -> list[dict]:
    tx = parsed_tx(url, signature)
    assert tx["meta"]["err"] is None, tx["meta"]
    return [i["parsed"]["info"] for i in tx["transaction"]["message"]["instructions"] if "parsed" in i]


def test_interest_bearing_pausable_scaled_and_reallocate_parse_as_a_validator_parses_them(node):
    runtime, server = node
    url = server.url
    owner, mint, scaled = Keypair(), Keypair(), Keypair()
    o, m, s = owner.pubkey(), mint.pubkey(), scaled.pubkey()
    runtime.airdrop(o, 10 * SOL)
    account = programs.associated_token_address(o, m, T22)

    async def main():
        async with AsyncClient(url) as client:

            async def rent(space: int) -> int:
                return (await client.get_minimum_balance_for_rent_exemption(space)).value

            made = await send(
                client,
                [
                    create_account(
                        CreateAccountParams(
                            from_pubkey=o,
                            to_pubkey=m,
                            lamports=await rent(INTEREST_AND_PAUSE),
                            space=INTEREST_AND_PAUSE,
                            owner=T22,
                        )
                    ),
                    ix(bytes([33, 0]) + bytes(o) + struct.pack("<h", 50), w(m)),  # 0.5 % a year
                    ix(bytes([44, 0]) + bytes(o), w(m)),  # pausable, o may pause
                    ix(bytes([20, 2]) + bytes(o) + bytes([0]), w(m)),
                    programs.create_associated_token_account(o, o, m, token_program=T22),
                ],
                [owner, mint],
            )
            changed = await send(
                client,
                [
                    ix(bytes([33, 1]) + struct.pack("<h", -25), w(m), r(o, True)),
                    ix(bytes([44, 1]), w(m), r(o, True)),
                    ix(bytes([44, 2]), w(m), r(o, True)),
                    # reallocate the token account for required memos (ExtensionType 8)
                    ix(bytes([29]) + struct.pack("<H", 8), w(account), w(o, True), r(SYSTEM), r(o, True)),
                ],
                [owner],
            )
            ui = await send(
                client,
                [
                    create_account(
                        CreateAccountParams(
                            from_pubkey=o, to_pubkey=s, lamports=await rent(SCALED), space=SCALED, owner=T22
                        )
                    ),
                    ix(bytes([43, 0]) + bytes(32) + struct.pack("<d", 1.5), w(s)),  # no authority
                    ix(bytes([20, 2]) + bytes(o) + bytes([0]), w(s)),
                ],
                [owner, scaled],
            )
            return made, changed, ui

    made, changed, ui = asyncio.run(main())
    assert kinds(parsed_tx(url, made))[1:3] == ["initializeInterestBearingConfig", "initializePausableConfig"]
    interest, pausable = _infos(url, made)[1:3]
    assert interest == {"mint": str(m), "rateAuthority": str(o), "rate": 50}
    assert pausable == {"mint": str(m), "authority": str(o)}

    assert kinds(parsed_tx(url, changed)) == ["updateInterestBearingConfigRate", "pause", "resume", "reallocate"]
    rate, paused, resumed, grown = _infos(url, changed)
    assert rate == {"mint": str(m), "newRate": -25, "rateAuthority": str(o)}
    assert paused == resumed == {"mint": str(m), "authority": str(o)}
    assert grown == {
        "account": str(account),
        "payer": str(o),
        "systemProgram": str(SYSTEM),
        "extensionTypes": ["memoTransfer"],
        "owner": str(o),
    }

    assert kinds(parsed_tx(url, ui))[1] == "initializeScaledUiAmountConfig"
    assert _infos(url, ui)[1] == {"mint": str(s), "authority": None, "multiplier": "1.5"}


def test_the_multiplier_update_and_multisig_authorities_as_a_validator_names_them():
    mint, multisig, signer = (str(Keypair().pubkey()) for _ in range(3))
    update = instruction(
        programs.TOKEN_2022_PROGRAM, [mint, multisig, signer], bytes([43, 1]) + struct.pack("<dq", 2.0, 1_700), 1
    )
    assert update["parsed"] == {
        "info": {
            "mint": mint,
            "newMultiplier": "2",
            "newMultiplierTimestamp": 1_700,
            "multisigAuthority": multisig,
            "signers": [signer],
        },
        "type": "updateMultiplier",
    }
    rate = instruction(programs.TOKEN_2022_PROGRAM, [mint, multisig, signer], bytes([33, 1]) + struct.pack("<h", 7), 1)
    assert rate["parsed"]["info"] == {
        "mint": mint,
        "newRate": 7,
        "multisigRateAuthority": multisig,
        "signers": [signer],
    }
    # pause names two accounts at least, as a validator checks: one is left raw
    assert "parsed" not in instruction(programs.TOKEN_2022_PROGRAM, [mint], bytes([44, 1]), 1)


@pytest.mark.parametrize(
    ("value", "written"),
    [(1.0, "1"), (1.5, "1.5"), (0.1, "0.1"), (1e-7, "0.0000001"), (1e20, "100000000000000000000"), (-2.5, "-2.5")],
)
def test_the_multiplier_is_written_as_rust_displays_an_f64(value, written):
    assert _f64(struct.pack("<d", value), 0) == written
