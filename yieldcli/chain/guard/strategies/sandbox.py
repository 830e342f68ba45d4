"""The sandbox strategy program's layout (yieldcli/sandbox/program/README.md is the reference)."""

from __future__ import annotations

import struct
from dataclasses import replace

from solders.pubkey import Pubkey

from yieldcli.chain.guard.strategies.layout import Call, PositionView
from yieldcli.solana import strategy_program as sp

_NAMES = {sp.INIT_VAULT: "initVault", sp.CREDIT_YIELD: "creditYield"}


class SandboxLayout:
    name = "Sandbox strategy program"

    def decode(self, data: bytes, accounts: list[str]) -> Call:
        tag = data[0] if data else -1
        if tag == sp.DEPOSIT and len(data) == 41 and len(accounts) >= 9:
            (amount,) = struct.unpack_from("<Q", data, 1)
            user, payer, source, mint, vault, authority, position = accounts[:7]
            return Call(
                "deposit",
                user,
                payer,
                source,
                mint,
                position,
                vault,
                authority,
                amount,
                False,
                False,
                data[9:41],
                token_program=accounts[8],
            )
        if tag == sp.WITHDRAW and len(data) == 10 and len(accounts) >= 7 and data[9] in (0, 1):
            (amount,) = struct.unpack_from("<Q", data, 1)
            user, destination, mint, vault, authority, position = accounts[:6]
            everything = amount == sp.WITHDRAW_ALL and data[9] == sp.MODE_GROSS
            return Call(
                "withdraw",
                user,
                None,
                destination,
                mint,
                position,
                vault,
                authority,
                None if everything else amount,
                everything,
                data[9] == sp.MODE_EXCLUDE_FEES,
                token_program=accounts[6],
            )
        if tag == sp.CLOSE and len(data) == 1 and len(accounts) >= 7:
            user, recipient, mint, vault, authority, position = accounts[:6]
            return Call(
                "close", user, None, recipient, mint, position, vault, authority, None, True, token_program=accounts[6]
            )
        if tag in _NAMES:
            return Call(_NAMES[tag])
        return Call("unknown", malformed=f"data {data[:12].hex()} with {len(accounts)} accounts")

    def position(self, owner: str, data: bytes) -> PositionView | None:
        found = sp.parse_position(owner, data)
        if found is None:
            return None
        return PositionView(found.user, found.strategy_key, found.mint, found.deposited, found.balance)

    def strategy_key(self, strategy_id: str) -> bytes:
        return sp.strategy_key(strategy_id)

    def position_address(self, user: str, strategy_key: bytes, mint: str) -> str:
        seeds = [b"position", bytes(Pubkey.from_string(user)), strategy_key, bytes(Pubkey.from_string(mint))]
        return str(Pubkey.find_program_address(seeds, sp.PROGRAM)[0])

    def vault_address(self, mint: str) -> str:
        return str(sp.vault_address(Pubkey.from_string(mint)))

    def authority_address(self) -> str:
        return str(sp.authority_address())

    def withdrawal(self, balance: int, call: Call) -> tuple[int, int]:
        if call.everything:
            return balance, balance - sp.withdrawal_fee(balance)
        amount = call.amount or 0
        if call.exclude_fees:
            return amount + sp.withdrawal_fee(amount), amount
        return amount, amount - sp.withdrawal_fee(amount)

    def after(self, before: PositionView | None, call: str, gross: int) -> PositionView | None:
        # `call` is this program's instruction (`Call.kind`): its own vocabulary, not an action's name.
        if call == "close" or before is None:
            return None
        if call == "deposit":
            return replace(before, deposited=before.deposited + gross, balance=before.balance + gross)
        balance = before.balance - gross
        # What a withdrawal takes comes out of the yield first.
        return replace(before, balance=balance, deposited=min(before.deposited, balance))


LAYOUT = SandboxLayout()
