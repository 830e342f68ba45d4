"""The sandbox's strategy on its chain: real deposit, withdraw and close-account transactions.

The sandbox's strategy is an on-chain program of its own (yieldcli/sandbox/program/, its interface
in solana/strategy_program.py): a model of a strategy, not the real service's program.

- Per mint, a vault token account at a PDA of the program, whose token owner is the program's
  authority PDA: only the program moves what it holds.
- Per (user, strategy, mint), a position account owned by the program (a PDA of the three) recording
  what was deposited and what the position is worth. The user's first deposit opens it (the payer
  pays its rent); close-account closes it and gives the rent back to the user.
- deposit: the program moves the tokens from the user's account into the vault by CPI, signed by
  the user (native SOL is wrapped first). withdraw: the program pays the user's token account from
  the vault with its PDA's signature; a fee of `WITHDRAW_FEE_BPS` basis points (rounded up) stays in
  the vault. close: what is left goes to the user or `funds_recipient`.
- Yield: the sandbox's yield authority pays it into the vault with the program's CreditYield (the
  demo wallet's seeded positions get their yield that way).

Building a transaction changes nothing on chain, and the sandbox signs nothing a user sends. When the
RPC server confirms a transaction, the position accounts its strategy instructions name are read back
and the ledger takes their figures, so what the service serves is what the chain holds.

On a fresh chain, `StrategyChain` opens the vaults and seeds what the ledger says the demo wallet
holds: its SOL, its known tokens in associated token accounts, and its positions.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.compute_budget import set_compute_unit_limit
from solders.hash import Hash
from solders.instruction import Instruction
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import TransferParams, transfer
from solders.token.state import TokenAccount
from solders.transaction import VersionedTransaction

from yieldcli.amounts import format_units
from yieldcli.sandbox.ledger import Ledger, LedgerError
from yieldcli.sandbox.program_elf import program_elf
from yieldcli.sandbox.requests import Refusal, TransferRequest, amount_or_all, pubkey_param
from yieldcli.sandbox.rows import LIVE, WITHDRAW_ONLY, fund_status
from yieldcli.sandbox.runtime import Network, Runtime
from yieldcli.sandbox.seeding import ChainLedgerSync
from yieldcli.sandbox.service import PostHandler, Response, error_response, json_response
from yieldcli.sandbox.vault import (
    COMPUTE_UNIT_LIMIT,
    STRATEGY_PROGRAM,
    VAULT_AUTHORITY,
    WITHDRAW_FEE_BPS,
    WSOL_RESERVE,
    TokenState,
    instruction_json,
    withdrawal_fee,
)
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp
from yieldcli.tokens import WSOL_MINT, by_mint

# ---- the strategy on the chain -------------------------------------------------------------------


class StrategyChain(ChainLedgerSync):
    """The sandbox runtime with the strategy's accounts, the POST handlers, and the confirmation hook."""

    def __init__(self, ledger: Ledger, state_file: Path | str | None, network: Network | None = None):
        self.ledger = ledger
        self.runtime = Runtime(state_file, on_confirmed=self._on_confirmed, network=network)
        self.runtime.add_program(STRATEGY_PROGRAM, program_elf())
        self._lock = threading.RLock()
        self._rent = self.runtime.minimum_balance_for_rent_exemption(programs.TOKEN_ACCOUNT_SIZE)
        self._position_rent = self.runtime.minimum_balance_for_rent_exemption(sp.POSITION_SIZE)
        with self.runtime.lock:  # two processes starting on a fresh folder seed it once
            table = self._find_lookup_table()
            if table is None:
                table = self._seed()
            self.catch_up()
        self.lookup_table = AddressLookupTableAccount(table, self.runtime.lookup_table_addresses(table))

    # -- handlers

    def handlers(self) -> dict[str, PostHandler]:
        return {
            "/deposit/tx": lambda params: self._answer(self.deposit, params, "tx"),
            "/deposit/ix": lambda params: self._answer(self.deposit, params, "ix"),
            "/withdraw/tx": lambda params: self._answer(self.withdraw, params, "tx"),
            "/withdraw/ix": lambda params: self._answer(self.withdraw, params, "ix"),
            "/close-user-account/tx": lambda params: self._answer(self.close_account, params, "tx"),
            "/close-user-account/ix": lambda params: self._answer(self.close_account, params, "ix"),
        }

    def _answer(self, build: Callable[[dict[str, Any], bool], Response], params: dict[str, Any], form: str) -> Response:
        try:
            return build(params, form == "ix")
        except Refusal as exc:
            return error_response(exc.status, exc.message)
        except LedgerError as exc:
            return error_response(400, str(exc))

    # -- deposit

    def _transfer_request(self, params: dict[str, Any], as_ix: bool, action: str) -> TransferRequest:
        """What deposit and withdraw both read from the request, refusing what the service refuses."""
        strategy_id = params["strategy_id"]
        mint, decimals = self._asset(strategy_id, params, action)
        self._check_status(strategy_id, mint, action)
        user = pubkey_param(params, "user_key", required="user_key must be provided")
        payer = pubkey_param(params, "payer_key", required=None if as_ix else "payer_key must be provided") or user
        given_account = pubkey_param(params, "user_token_account")
        requested = amount_or_all(params)
        return TransferRequest(
            strategy_id, mint, decimals, user, payer, given_account, requested, Pubkey.from_string(mint)
        )

    def deposit(self, params: dict[str, Any], as_ix: bool) -> Response:
        strategy_id, mint, decimals, user, payer, given_account, requested, mint_key = self._transfer_request(
            params, as_ix, "deposit"
        )
        ixs = [set_compute_unit_limit(COMPUTE_UNIT_LIMIT)]
        with self._lock:
            opens_position = self.runtime.get_account(sp.position_address(user, strategy_id, mint_key)) is None
            if mint == WSOL_MINT and given_account is None:
                # Native SOL is wrapped into the user's WSOL account first (only what it lacks).
                source = self.runtime.associated_token_address(user, mint_key)
                held = self._token(source)
                in_account = held.amount if held else 0
                reserve = WSOL_RESERVE
                if payer == user:  # the user also pays the rent of what the deposit opens
                    reserve += (self._rent if held is None else 0) + (self._position_rent if opens_position else 0)
                available = in_account + max(self.runtime.get_balance(user) - reserve, 0)
                amount = available if requested is None else requested
                self._check_deposit(amount, available, mint, decimals, requested is None, "native and wrapped")
                wrap = max(amount - in_account, 0)
                if wrap:
                    ixs += [
                        self.runtime.create_ata_instruction(payer, user, mint_key),
                        transfer(TransferParams(from_pubkey=user, to_pubkey=source, lamports=wrap)),
                        programs.token_sync_native(source),
                    ]
            else:
                source = given_account or self.runtime.associated_token_address(user, mint_key)
                held = self._token(source)
                if held is not None and (held.mint != mint or held.owner != str(user)):
                    raise Refusal(f"Token account {source} is not a {mint} account of {user}")
                available = held.amount if held else 0
                amount = available if requested is None else requested
                self._check_deposit(amount, available, mint, decimals, requested is None, f"token account {source}")
        # The program opens the user's position on the first deposit (rent from the payer).
        program = self.runtime.token_program(mint_key)
        ixs.append(sp.deposit(user, payer, source, mint_key, strategy_id, amount, token_program=program))
        return self._transaction(ixs, payer, as_ix, "deposit_instructions")

    @staticmethod
    def _check_deposit(amount: int, available: int, mint: str, decimals: int, everything: bool, where: str) -> None:
        if everything and available == 0:
            raise Refusal(f"Insufficient balance: the wallet holds no {units_of(mint)} ({where}) to deposit")
        if amount > available:
            raise Refusal(
                f"Insufficient balance: the wallet holds {in_units(available, mint, decimals)} ({where}); "
                f"{in_units(amount, mint, decimals)} requested"
            )

    # -- withdraw

    def withdraw(self, params: dict[str, Any], as_ix: bool) -> Response:
        strategy_id, mint, decimals, user, payer, given_account, requested, mint_key = self._transfer_request(
            params, as_ix, "withdraw"
        )
        with self._lock:
            position = self._position(sp.position_address(user, strategy_id, mint_key))
            if position is None:
                raise Refusal(f"No position: wallet {user} has no position in {mint} in strategy {strategy_id}")
            balance = position.balance
            exclude_fees = bool(params.get("exclude_fees")) and requested is not None
            if requested is None:
                if balance == 0:
                    raise Refusal(f"Insufficient balance: the position in {mint} is empty")
                total, fee = balance, withdrawal_fee(balance)
            elif exclude_fees:
                fee = withdrawal_fee(requested)
                total = requested + fee
            else:
                total, fee = requested, withdrawal_fee(requested)
            if total > balance and not params.get("no_balance_checks"):
                raise Refusal(
                    f"Insufficient balance: the position holds {in_units(balance, mint, decimals)}; withdrawing "
                    f"{in_units(requested or 0, mint, decimals)} takes {in_units(total, mint, decimals)} "
                    f"(fee {in_units(fee, mint, decimals)} included)"
                )
            ixs = [set_compute_unit_limit(COMPUTE_UNIT_LIMIT)]
            destination = given_account or self.runtime.associated_token_address(user, mint_key)
            existing = self._token(destination)
            create, unwrap = params.get("create_wsol_ata"), params.get("unwrap_wsol_ata")
            create = True if create is None else create
            if mint == WSOL_MINT and params.get("detect_wsol_ata"):
                create, unwrap = (False, False) if existing is not None else (True, True)
            if given_account is not None:
                if existing is None or existing.mint != mint or existing.owner != str(user):
                    raise Refusal(f"user_token_account {given_account} is not a {mint} token account of {user}")
            elif existing is None:
                if mint == WSOL_MINT and not create:
                    raise Refusal(
                        f"The user's WSOL account {destination} does not exist; "
                        "set create_wsol_ata (or detect_wsol_ata) to create it"
                    )
                ixs.append(self.runtime.create_ata_instruction(payer, user, mint_key))
            amount = sp.WITHDRAW_ALL if requested is None else requested
            program = self.runtime.token_program(mint_key)
            ixs.append(
                sp.withdraw(
                    user, destination, mint_key, strategy_id, amount, exclude_fees=exclude_fees, token_program=program
                )
            )
            if mint == WSOL_MINT and unwrap:
                ixs.append(programs.token_close_account(destination, user, user))
        return self._transaction(ixs, payer, as_ix, "withdraw_instructions")

    # -- close the position

    def close_account(self, params: dict[str, Any], as_ix: bool) -> Response:
        account = pubkey_param(params, "user_account")
        named_user = pubkey_param(params, "user_pubkey")
        named_mint = pubkey_param(params, "mint")
        named_strategy = params.get("strategy_id")
        for name in ("payer", "funds_recipient", "user_token_account"):
            pubkey_param(params, name)
        if account is not None:
            position = self._position(account)
            strategy_id = self._strategy_of(position) if position is not None else None
            if position is None or strategy_id is None:
                raise Refusal(f"Fund account {account} not found", 404)
            user, mint = Pubkey.from_string(position.user), position.mint
            if (
                named_user is not None
                and named_strategy
                and named_mint is not None
                and sp.position_address(named_user, named_strategy, named_mint) != account
            ):
                raise Refusal("user_account is not the fund account of user_pubkey + strategy_id + mint")
        else:
            assert named_user is not None and named_mint is not None and named_strategy
            strategy_id = named_strategy
            if self.ledger.strategy(strategy_id) is None:
                raise Refusal("Strategy not found")
            user, mint = named_user, str(named_mint)
            account = sp.position_address(user, strategy_id, named_mint)
            position = self._position(account)
            if position is None:
                raise Refusal(
                    f"Fund account not found: wallet {user} has no position in {mint} in strategy {strategy_id}", 404
                )
        if position.balance:  # closing withdraws what is left: refused as a withdrawal is
            self._check_status(strategy_id, mint, "close")
        payer = pubkey_param(params, "payer") or user
        mint_key = Pubkey.from_string(mint)
        ixs: list[Instruction] = []
        recipient = self.runtime.associated_token_address(user, mint_key)
        if position.balance:
            # What the position still holds goes to funds_recipient: a token account of the mint, or a
            # wallet (its associated token account, opened if needed); default the user's.
            named = pubkey_param(params, "funds_recipient") or pubkey_param(params, "user_token_account") or user
            held = self._token(named)
            if held is not None and held.mint != mint:
                raise Refusal(f"funds_recipient {named} is not a {mint} token account")
            recipient = named
            if held is None:
                recipient = self.runtime.associated_token_address(named, mint_key)
                if self._token(recipient) is None:
                    ixs.append(self.runtime.create_ata_instruction(payer, named, mint_key))
        # The position's rent goes back to the user, whose first deposit opened it.
        ixs.append(sp.close(user, recipient, mint_key, account, token_program=self.runtime.token_program(mint_key)))
        if as_ix:
            return json_response(200, {"close_user_fund_instructions": [instruction_json(ix) for ix in ixs]})
        # A bare JSON string, as every /tx endpoint answers (and the official SDK expects).
        return json_response(200, self._encode(ixs, payer, with_table=False))

    def _strategy_of(self, position: sp.Position) -> str | None:
        return next((sid for sid in self.ledger.strategy_ids() if sp.strategy_key(sid) == position.strategy_key), None)

    # -- shared parts

    def _check_status(self, strategy_id: str, mint: str, action: str) -> None:
        """The service's refusal of a deposit into a fund that is not Live, or a withdrawal (or closing,
        which withdraws what is left) from one that is Paused."""
        fund = self.ledger.fund_for(strategy_id, mint)
        status = fund_status(fund)
        if status == LIVE or (status == WITHDRAW_ONLY and action != "deposit"):
            return
        fund_id = fund["fund_id"] if fund else f"{strategy_id}/{mint}"
        doing = {"deposit": "Deposits are", "withdraw": "Withdrawals are"}.get(action, "Closing accounts is")
        raise Refusal(f"Fund {fund_id} is {status}: {doing} not accepted")

    def _asset(self, strategy_id: str, params: dict[str, Any], action: str) -> tuple[str, int]:
        """The base asset's mint (checked against the strategy) and decimals."""
        strategy = self.ledger.strategy(strategy_id)
        if strategy is None:
            raise Refusal("Strategy not found")
        fund_id = params.get("fund_id")
        fund = self.ledger.fund(fund_id) if fund_id else None
        if fund_id and (fund is None or fund["strategy_id"] != strategy_id):
            raise Refusal(f"Fund {fund_id} is not a fund of strategy {strategy_id}")
        base = pubkey_param(params, "base_asset", required=None if fund else "base_asset must be provided")
        mint = str(base) if base is not None else fund["mint"]  # type: ignore[index]
        if fund is not None and fund["mint"] != mint:
            raise Refusal(f"Fund {fund_id} holds {fund['mint']}, not {mint}")
        if mint not in strategy["assets"]:
            raise Refusal(f"Asset {mint} is not supported by strategy {strategy_id}")
        decimals = self.runtime.mint_decimals(Pubkey.from_string(mint))
        if decimals is None:
            raise Refusal(
                f"Asset {mint} cannot be used for a {action} in this sandbox: it has no mint on the sandbox chain"
            )
        return mint, decimals

    def _token(self, address: Pubkey) -> TokenState | None:
        """A token account of SPL Token or Token-2022 (its base layout; a Token-2022 one's extensions follow)."""
        account = self.runtime.get_account(address)
        data = bytes(account.data) if account is not None else b""
        if account is None or programs.parse_token_account(str(account.owner), data) is None:
            return None
        state = TokenAccount.from_bytes(data[: programs.TOKEN_ACCOUNT_SIZE])
        close = state.close_authority
        return TokenState(str(state.mint), str(state.owner), state.amount, str(close) if close is not None else None)

    def _transaction(self, ixs: list[Instruction], payer: Pubkey, as_ix: bool, key: str) -> Response:
        if as_ix:
            return json_response(
                200, {key: [instruction_json(ix) for ix in ixs], "lookup_table": str(self.lookup_table.key)}
            )
        return json_response(200, self._encode(ixs, payer, with_table=True))

    def _encode(self, ixs: list[Instruction], payer: Pubkey, *, with_table: bool) -> str:
        """An unsigned v0 transaction with a fresh blockhash, every signature slot empty, as base64."""
        blockhash, _ = self.runtime.latest_blockhash()
        tables = [self.lookup_table] if with_table else []
        message = MessageV0.try_compile(payer, ixs, tables, Hash.from_string(blockhash))
        tx = VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)
        return base64.b64encode(bytes(tx)).decode("ascii")

    def _position(self, address: Pubkey) -> sp.Position | None:
        account = self.runtime.get_account(address)
        return None if account is None else sp.parse_position(str(account.owner), bytes(account.data))


__all__ = [
    "COMPUTE_UNIT_LIMIT",
    "Refusal",
    "STRATEGY_PROGRAM",
    "StrategyChain",
    "VAULT_AUTHORITY",
    "WITHDRAW_FEE_BPS",
    "instruction_json",
    "withdrawal_fee",
]


def units_of(mint: str) -> str:
    """A mint as people name it: its symbol when known."""
    known = by_mint(mint)
    return known.symbol if known else mint


def in_units(raw: int, mint: str, decimals: int) -> str:
    """`1,247.245 USDC`: what the service says to a person is in token units, as the user typed them."""
    return f"{format_units(raw, decimals, min_fraction=0)} {units_of(mint)}"
