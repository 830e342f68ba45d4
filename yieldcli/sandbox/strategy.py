"""The sandbox's strategy on its chain: real deposit, withdraw and close-account transactions.

The real service builds transactions for its on-chain strategy program. The sandbox has no such
program; it builds the same flows from SPL Token, Associated Token, System, Compute Budget and an
address lookup table, so they execute for real on the sandbox `Runtime` and move real balances:

- The strategy's vault authority is a deterministic keypair (`VAULT_AUTHORITY`), held by the sandbox.
- A user's fund account for (wallet, strategy, mint) is an SPL token account of that mint at
  `Pubkey.create_with_seed(wallet, fund_seed(...), Token program)`, owned by a token multisig at
  `create_with_seed(wallet, FUND_OWNER_SEED, Token program)` whose signers are the wallet and the
  vault authority, one signature required: the tokens leave the wallet's own accounts, and the
  wallet alone signs withdrawals and the close. Both accounts are opened by the user's first
  deposit transaction itself (the wallet signs as the seeds' base, the payer pays the rent), so
  building a transaction changes nothing on chain and the sandbox signs nothing a user sends.
- Withdrawals carry a fee of `WITHDRAW_FEE_BPS` basis points of the amount, rounded up, paid from
  the fund account into the strategy's fee account for that mint (also owned by the vault
  authority). Without exclude_fees the fee comes out of the amount; with it the user receives the
  full amount and the fee is taken from the fund account on top.
- Every transaction ends with a record instruction to the strategy program id: UTF-8 text
  `yield:deposit:<strategy>:<mint>:<amount>`, `yield:withdraw:<strategy>:<mint>:<to user>:<fee>` or
  `yield:close:<strategy>:<mint>`, signed by the user. The program deployed at that address in the
  sandbox is a copy of the SPL Memo program, so the record executes (and checks the signature) for
  real. When the RPC server confirms a transaction, the records in it tell which positions changed;
  their values are then read from the fund accounts, and the wallets' balances from their accounts
  on chain, so what the service serves is what the chain holds.

On a fresh chain, `StrategyChain` seeds what the ledger says the demo wallet holds: its SOL, its
known tokens in associated token accounts, and fund accounts holding its positions.
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
from solders.system_program import CreateAccountWithSeedParams, TransferParams, create_account_with_seed, transfer
from solders.token.state import TokenAccount
from solders.transaction import VersionedTransaction

from yieldcli.solana import programs
from yieldcli.sandbox.ledger import Ledger, LedgerError
from yieldcli.sandbox.requests import Refusal, TransferRequest, amount_or_all, pubkey_param
from yieldcli.sandbox.runtime import Network, Runtime
from yieldcli.sandbox.seeding import ChainLedgerSync
from yieldcli.sandbox.service import PostHandler, Response, error_response, json_response
from yieldcli.sandbox.vault import (
    COMPUTE_UNIT_LIMIT, FUND_OWNER_SEED, MULTISIG_SIZE, STRATEGY_PROGRAM, TOKEN_KEY, VAULT, VAULT_AUTHORITY,
    WITHDRAW_FEE_BPS, WSOL_RESERVE, Record, TokenState, created_lamports, fee_account_address,
    fund_account_address, fund_owner_address, fund_seed, initialize_account3, initialize_multisig2, instruction_json,
    multisig_close_account, multisig_signers, multisig_transfer_checked, parse_record, record_instruction,
    withdrawal_fee,
)
from yieldcli.tokens import WSOL_MINT

# ---- the strategy on the chain -------------------------------------------------------------------


class StrategyChain(ChainLedgerSync):
    """The sandbox runtime with the strategy's accounts, the POST handlers, and the confirmation hook."""

    def __init__(self, ledger: Ledger, state_file: Path | str | None, network: Network | None = None):
        self.ledger = ledger
        self.runtime = Runtime(state_file, on_confirmed=self._on_confirmed, network=network)
        memo = self.runtime.get_account(Pubkey.from_string(programs.MEMO_PROGRAM))
        assert memo is not None, "LiteSVM comes with the SPL Memo program"
        self.runtime.add_program(STRATEGY_PROGRAM, bytes(memo.data))
        self._lock = threading.RLock()
        self._rent = self.runtime.minimum_balance_for_rent_exemption(programs.TOKEN_ACCOUNT_SIZE)
        self._multisig_rent = self.runtime.minimum_balance_for_rent_exemption(MULTISIG_SIZE)
        with self.runtime.lock:  # two processes starting on a fresh folder seed it once
            table = self._find_lookup_table()
            if table is None:
                table = self._seed()
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
        user = pubkey_param(params, "user_key", required="user_key must be provided")
        payer = pubkey_param(params, "payer_key", required=None if as_ix else "payer_key must be provided") or user
        given_account = pubkey_param(params, "user_token_account")
        requested = amount_or_all(params)
        return TransferRequest(strategy_id, mint, decimals, user, payer, given_account, requested, Pubkey.from_string(mint))

    def deposit(self, params: dict[str, Any], as_ix: bool) -> Response:
        strategy_id, mint, decimals, user, payer, given_account, requested, mint_key = self._transfer_request(
            params, as_ix, "deposit")
        ixs = [set_compute_unit_limit(COMPUTE_UNIT_LIMIT)]
        with self._lock:
            if mint == WSOL_MINT and given_account is None:
                # Native SOL is wrapped into the user's WSOL account first (only what it lacks).
                source = programs.associated_token_address(user, mint_key)
                held = self._token(source)
                in_account = held.amount if held else 0
                reserve = WSOL_RESERVE + (self._rent if held is None and payer == user else 0)
                if payer == user:  # the user also pays for opening its fund account, when it must
                    reserve += sum(ix_lamports for ix in self._open_ixs(user, strategy_id, mint_key, payer)
                                   if (ix_lamports := created_lamports(ix)) is not None)
                available = in_account + max(self.runtime.get_balance(user) - reserve, 0)
                amount = available if requested is None else requested
                self._check_deposit(amount, available, mint, requested is None, "SOL (native and wrapped)")
                wrap = max(amount - in_account, 0)
                if wrap:
                    ixs += [
                        programs.create_associated_token_account(payer, user, mint_key),
                        transfer(TransferParams(from_pubkey=user, to_pubkey=source, lamports=wrap)),
                        programs.token_sync_native(source),
                    ]
            else:
                source = given_account or programs.associated_token_address(user, mint_key)
                held = self._token(source)
                if held is not None and (held.mint != mint or held.owner != str(user)):
                    raise Refusal(f"Token account {source} is not a {mint} account of {user}")
                available = held.amount if held else 0
                amount = available if requested is None else requested
                self._check_deposit(amount, available, mint, requested is None, f"{mint} in {source}")
            # A user without a fund account opens it in this same transaction, paid by the payer and
            # signed by the user (the seed's base): building a transaction changes nothing on chain.
            ixs += self._open_ixs(user, strategy_id, mint_key, payer)
            fund = fund_account_address(str(user), strategy_id, mint)
        ixs += [
            programs.token_transfer_checked(source, mint_key, fund, user, amount, decimals),
            record_instruction("deposit", strategy_id, mint, user, amount),
        ]
        return self._transaction(ixs, payer, as_ix, "deposit_instructions")

    @staticmethod
    def _check_deposit(amount: int, available: int, mint: str, everything: bool, what: str) -> None:
        if everything and available == 0:
            raise Refusal(f"Insufficient balance: the wallet holds no {what} to deposit")
        if amount > available:
            raise Refusal(f"Insufficient balance: the wallet holds {available} base units of {what}; {amount} requested")

    # -- withdraw

    def withdraw(self, params: dict[str, Any], as_ix: bool) -> Response:
        strategy_id, mint, decimals, user, payer, given_account, requested, mint_key = self._transfer_request(
            params, as_ix, "withdraw")
        fund = fund_account_address(str(user), strategy_id, mint)
        with self._lock:
            position = self._token(fund)
            if position is None:
                raise Refusal(f"No position: wallet {user} has no fund account for {mint} in strategy {strategy_id}")
            balance = position.amount
            if requested is None:
                if balance == 0:
                    raise Refusal(f"Insufficient balance: the position in {mint} is empty")
                total, fee = balance, withdrawal_fee(balance)
                to_user = balance - fee
            elif params.get("exclude_fees"):
                fee = withdrawal_fee(requested)
                to_user, total = requested, requested + fee
            else:
                fee = withdrawal_fee(requested)
                to_user, total = requested - fee, requested
            if total > balance and not params.get("no_balance_checks"):
                raise Refusal(
                    f"Insufficient balance: the position holds {balance} base units; "
                    f"withdrawing {requested} takes {total} (fee {fee} included)"
                )
            ixs = [set_compute_unit_limit(COMPUTE_UNIT_LIMIT)]
            destination = given_account or programs.associated_token_address(user, mint_key)
            existing = self._token(destination)
            create, unwrap = params.get("create_wsol_ata"), params.get("unwrap_wsol_ata")
            create = True if create is None else create
            if mint == WSOL_MINT and params.get("detect_wsol_ata"):
                create, unwrap = (False, False) if existing is not None else (True, True)
            if given_account is not None:
                if existing is None or existing.mint != mint:
                    raise Refusal(f"user_token_account {given_account} is not a {mint} token account")
            elif existing is None:
                if mint == WSOL_MINT and not create:
                    raise Refusal(
                        f"The user's WSOL account {destination} does not exist; "
                        "set create_wsol_ata (or detect_wsol_ata) to create it"
                    )
                ixs.append(programs.create_associated_token_account(payer, user, mint_key))
            owner = fund_owner_address(str(user))
            if to_user:
                ixs.append(multisig_transfer_checked(fund, mint_key, destination, owner, user, to_user, decimals))
            fee_account = fee_account_address(strategy_id, mint)
            ixs.append(multisig_transfer_checked(fund, mint_key, fee_account, owner, user, fee, decimals))
            if mint == WSOL_MINT and unwrap:
                ixs.append(programs.token_close_account(destination, user, user))
        ixs.append(record_instruction("withdraw", strategy_id, mint, user, to_user, fee))
        return self._transaction(ixs, payer, as_ix, "withdraw_instructions")

    # -- close the fund account

    def close_account(self, params: dict[str, Any], as_ix: bool) -> Response:
        account = pubkey_param(params, "user_account")
        named_user = pubkey_param(params, "user_pubkey")
        named_mint = pubkey_param(params, "mint")
        named_strategy = params.get("strategy_id")
        for name in ("payer", "funds_recipient", "user_token_account"):
            pubkey_param(params, name)
        if account is not None:
            fund = self._token(account)
            found = self._identify_fund(account, fund)
            if found is None:
                raise Refusal(f"Fund account {account} not found", 404)
            user, strategy_id, mint = found
            if named_user is not None and named_strategy and named_mint is not None:
                if fund_account_address(str(named_user), named_strategy, str(named_mint)) != account:
                    raise Refusal("user_account is not the fund account of user_pubkey + strategy_id + mint")
        else:
            assert named_user is not None and named_mint is not None and named_strategy
            strategy_id = named_strategy
            if self.ledger.strategy(strategy_id) is None:
                raise Refusal("Strategy not found")
            user, mint = named_user, str(named_mint)
            account = fund_account_address(str(user), strategy_id, mint)
            fund = self._token(account)
            if fund is None:
                raise Refusal(f"Fund account not found: wallet {user} has no fund account for {mint} in strategy {strategy_id}", 404)
        assert fund is not None
        payer = pubkey_param(params, "payer") or user
        mint_key = Pubkey.from_string(mint)
        owner = fund_owner_address(str(user))
        ixs: list[Instruction] = []
        if fund.amount:
            # What the account still holds goes to funds_recipient: a token account of the mint, or a
            # wallet (its associated token account, opened if needed); default the user's.
            named = pubkey_param(params, "funds_recipient") or pubkey_param(params, "user_token_account") or user
            held = self._token(named)
            if held is not None and held.mint != mint:
                raise Refusal(f"funds_recipient {named} is not a {mint} token account")
            recipient = named
            if held is None:
                recipient = programs.associated_token_address(named, mint_key)
                if self._token(recipient) is None:
                    ixs.append(programs.create_associated_token_account(payer, named, mint_key))
            decimals = self.runtime.mint_decimals(mint_key)
            assert decimals is not None
            ixs.append(multisig_transfer_checked(account, mint_key, recipient, owner, user, fund.amount, decimals))
        # The account's rent goes back to the user, who opened it.
        ixs += [
            multisig_close_account(account, user, owner, user),
            record_instruction("close", strategy_id, mint, user),
        ]
        if as_ix:
            return json_response(200, {"close_user_fund_instructions": [instruction_json(ix) for ix in ixs]})
        # A bare JSON string, as every /tx endpoint answers (and the official SDK expects).
        return json_response(200, self._encode(ixs, payer, with_table=False))

    def _identify_fund(self, account: Pubkey, fund: TokenState | None) -> tuple[Pubkey, str, str] | None:
        """(user, strategy, mint) of a fund account, found from the signers of the multisig owning it."""
        owner = self.runtime.get_account(Pubkey.from_string(fund.owner)) if fund is not None else None
        if fund is None or owner is None or owner.owner != TOKEN_KEY:
            return None
        for user in multisig_signers(bytes(owner.data)):
            for strategy_id in self.ledger.strategy_ids():
                if user != str(VAULT) and fund_account_address(user, strategy_id, fund.mint) == account:
                    return Pubkey.from_string(user), strategy_id, fund.mint
        return None

    # -- shared parts

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
            raise Refusal(f"Asset {mint} cannot be used for a {action} in this sandbox: it has no mint on the sandbox chain")
        return mint, decimals

    def _token(self, address: Pubkey) -> TokenState | None:
        account = self.runtime.get_account(address)
        if account is None or str(account.owner) != programs.TOKEN_PROGRAM or len(account.data) != programs.TOKEN_ACCOUNT_SIZE:
            return None
        state = TokenAccount.from_bytes(bytes(account.data))
        close = state.close_authority
        return TokenState(str(state.mint), str(state.owner), state.amount, str(close) if close is not None else None)

    def _transaction(self, ixs: list[Instruction], payer: Pubkey, as_ix: bool, key: str) -> Response:
        if as_ix:
            return json_response(200, {key: [instruction_json(ix) for ix in ixs], "lookup_table": str(self.lookup_table.key)})
        return json_response(200, self._encode(ixs, payer, with_table=True))

    def _encode(self, ixs: list[Instruction], payer: Pubkey, *, with_table: bool) -> str:
        """An unsigned v0 transaction with a fresh blockhash, every signature slot empty, as base64."""
        blockhash, _ = self.runtime.latest_blockhash()
        tables = [self.lookup_table] if with_table else []
        message = MessageV0.try_compile(payer, ixs, tables, Hash.from_string(blockhash))
        tx = VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)
        return base64.b64encode(bytes(tx)).decode("ascii")

    def _open_ixs(self, user: Pubkey, strategy_id: str, mint: Pubkey, payer: Pubkey, *, owner_exists: bool | None = None) -> list[Instruction]:
        """What opens the user's fund account (and the multisig owning its fund accounts) when missing:
        accounts at addresses seeded from the user's key, so only the user and the payer sign."""
        fund = fund_account_address(str(user), strategy_id, str(mint))
        if self.runtime.get_account(fund) is not None:
            return []
        owner = fund_owner_address(str(user))
        ixs: list[Instruction] = []
        if not (owner_exists if owner_exists is not None else self.runtime.get_account(owner) is not None):
            ixs += [
                create_account_with_seed(CreateAccountWithSeedParams(
                    from_pubkey=payer, to_pubkey=owner, base=user, seed=FUND_OWNER_SEED,
                    lamports=self._multisig_rent, space=MULTISIG_SIZE, owner=TOKEN_KEY,
                )),
                # One signature of the two suffices: the user's (the vault's is the strategy's own).
                initialize_multisig2(owner, [user, VAULT], 1),
            ]
        return ixs + [
            create_account_with_seed(CreateAccountWithSeedParams(
                from_pubkey=payer, to_pubkey=fund, base=user, seed=fund_seed(str(user), strategy_id, str(mint)),
                lamports=self._rent, space=programs.TOKEN_ACCOUNT_SIZE, owner=TOKEN_KEY,
            )),
            initialize_account3(fund, mint, owner),
        ]


__all__ = [
    "COMPUTE_UNIT_LIMIT", "Record", "Refusal", "STRATEGY_PROGRAM", "StrategyChain", "VAULT_AUTHORITY",
    "WITHDRAW_FEE_BPS", "fee_account_address", "fund_account_address", "instruction_json", "parse_record",
    "record_instruction", "withdrawal_fee",
]
