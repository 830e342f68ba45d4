"""Seeding a fresh sandbox chain from the ledger, and bringing the ledger up to date with the chain."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from solders.address_lookup_table_account import AddressLookupTable
from solders.instruction import Instruction
from solders.pubkey import Pubkey
from solders.system_program import CreateAccountWithSeedParams, TransferParams, create_account_with_seed, transfer
from solders.transaction import VersionedTransaction

from yieldcli.solana import programs
from yieldcli.sandbox import demo
from yieldcli.sandbox.runtime import SANDBOX_AUTHORITY, TxRecord
from yieldcli.sandbox.vault import (
    CHAIN_MINTS, MINT_AUTHORITY, STRATEGY_PROGRAM, TOKEN_KEY, U64_MAX, VAULT, VAULT_AUTHORITY, VAULT_FLOAT, WSOL_KEY,
    TokenState, fee_account_address, fee_seed, fits_one_transaction, initialize_account3, fund_account_address, fund_owner_address,
    parse_record, transfer_lamports,
)
from yieldcli.tokens import NATIVE_SOL_PSEUDO_MINT


class ChainLedgerSync:
    """The part of `StrategyChain` that keeps the chain and the ledger in step."""

    runtime: Any
    ledger: Any
    _rent: int  # rent-exempt lamports of a token account

    if TYPE_CHECKING:  # provided by `StrategyChain`, the class this part is mixed into
        def _token(self, address: Pubkey) -> TokenState | None: ...
        def _open_ixs(self, user: Pubkey, strategy_id: str, mint: Pubkey, payer: Pubkey, *,
                      owner_exists: bool | None = None) -> list[Instruction]: ...

    def _find_lookup_table(self) -> Pubkey | None:
        """The strategy's lookup table: made last when the chain is seeded, so it also says the seeding is done."""
        for address, account in self.runtime.program_accounts(Pubkey.from_string(programs.ADDRESS_LOOKUP_TABLE_PROGRAM)):
            try:
                table = AddressLookupTable.deserialize(bytes(account.data))
            except BaseException as exc:  # pyo3 panics are BaseExceptions
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                continue
            if table.meta.authority == VAULT:
                return address
        return None

    def _fee_ixs(self, strategy_id: str, mint: Pubkey) -> list[Instruction]:
        fee_account = fee_account_address(strategy_id, str(mint))
        return [
            create_account_with_seed(
                CreateAccountWithSeedParams(
                    from_pubkey=VAULT, to_pubkey=fee_account, base=VAULT, seed=fee_seed(strategy_id, str(mint)),
                    lamports=self._rent, space=programs.TOKEN_ACCOUNT_SIZE, owner=TOKEN_KEY,
                )
            ),
            initialize_account3(fee_account, mint, VAULT),
        ]

    def _seed(self) -> Pubkey:
        """Put on chain what the ledger says the demo wallet holds, the fee accounts, and the lookup table.

        Each step tops up to the ledger's figure, so seeding again after an interruption adds nothing twice.
        """
        rt = self.runtime
        pairs = [
            (sid, Pubkey.from_string(mint))
            for sid in self.ledger.strategy_ids()
            for mint in (self.ledger.strategy(sid) or {}).get("assets", [])
            if mint in CHAIN_MINTS
        ]
        steps = [
            self._fee_ixs(sid, mint) for sid, mint in pairs if rt.get_account(fee_account_address(sid, str(mint))) is None
        ]
        wallet = Pubkey.from_string(demo.DEMO_WALLET)
        tokens = self.ledger.wallet_tokens(demo.DEMO_WALLET)
        for mint in CHAIN_MINTS:
            mint_key = Pubkey.from_string(mint)
            top_up = tokens.get(mint, 0) - rt.token_balance(wallet, mint_key)
            if 0 < top_up and tokens[mint] <= U64_MAX:
                ata = programs.associated_token_address(wallet, mint_key)
                steps.append([programs.create_associated_token_account(VAULT, wallet, mint_key), *self._fill(ata, mint_key, top_up)])
        owner_exists = rt.get_account(fund_owner_address(demo.DEMO_WALLET)) is not None
        for strategy_id, mint, value in self.ledger.wallet_positions(demo.DEMO_WALLET):
            if mint not in CHAIN_MINTS or not 0 < value <= U64_MAX:
                continue
            mint_key = Pubkey.from_string(mint)
            fund = fund_account_address(demo.DEMO_WALLET, strategy_id, mint)
            held = self._token(fund)
            top_up = value - (held.amount if held else 0)
            if top_up > 0:
                opening = [] if held is not None else self._open_ixs(wallet, strategy_id, mint_key, VAULT, owner_exists=owner_exists)
                owner_exists = owner_exists or bool(opening)
                steps.append([*opening, *self._fill(fund, mint_key, top_up)])
        wrapped = sum(
            ix_lamports for step in steps for ix in step if (ix_lamports := transfer_lamports(ix)) is not None
        )
        if rt.get_balance(VAULT) < wrapped + VAULT_FLOAT:
            rt.airdrop(VAULT, wrapped + VAULT_FLOAT)
        self._execute_batched(steps)
        lamports = tokens.get(NATIVE_SOL_PSEUDO_MINT, 0) - rt.get_balance(wallet)
        if 0 < lamports and tokens[NATIVE_SOL_PSEUDO_MINT] <= U64_MAX:
            rt.airdrop(wallet, lamports)

        addresses = [VAULT, *(fee_account_address(sid, str(mint)) for sid, mint in pairs)]
        addresses += [Pubkey.from_string(m) for m in CHAIN_MINTS]
        addresses += [
            Pubkey.from_string(x)
            for x in (programs.TOKEN_PROGRAM, programs.ASSOCIATED_TOKEN_PROGRAM, programs.SYSTEM_PROGRAM, programs.COMPUTE_BUDGET_PROGRAM, str(STRATEGY_PROGRAM))
        ]
        table = rt.create_lookup_table(list(dict.fromkeys(addresses)), authority=VAULT_AUTHORITY)
        rt.advance_slots(1)  # addresses added by extend are usable from the next slot
        return table

    @staticmethod
    def _fill(account: Pubkey, mint: Pubkey, amount: int) -> list[Instruction]:
        """Instructions giving a token account `amount` more: minted, or for WSOL lamports from the vault, synced."""
        if mint == WSOL_KEY:
            return [transfer(TransferParams(from_pubkey=VAULT, to_pubkey=account, lamports=amount)), programs.token_sync_native(account)]
        return [programs.token_mint_to(mint, account, MINT_AUTHORITY, amount)]

    def _execute_batched(self, steps: list[list[Instruction]]) -> None:
        """Run the steps (each a list of instructions kept together) in as few transactions as fit."""
        batch: list[Instruction] = []
        for step in steps:
            if batch and not fits_one_transaction([*batch, *step]):
                self._execute_setup(batch)
                batch = []
            batch += step
        if batch:
            self._execute_setup(batch)

    def _execute_setup(self, ixs: list[Instruction]) -> None:
        """Run setup instructions signed by the vault authority, and the mint authority and the demo
        wallet (the base of its fund accounts' addresses) where they sign."""
        signing = {m.pubkey for ix in ixs for m in ix.accounts if m.is_signer}
        extra = [k for k in (SANDBOX_AUTHORITY, demo.demo_keypair()) if k.pubkey() in signing]
        self.runtime.execute(ixs, [VAULT_AUTHORITY, *extra])

    # -- following the chain

    def _on_confirmed(self, tx: VersionedTransaction, record: TxRecord) -> None:
        """A transaction landed without error: bring the positions and wallets it touched up to date."""
        message = tx.message
        keys = list(message.account_keys)
        loaded = [Pubkey.from_string(k) for k in (*record.loaded_writable, *record.loaded_readonly)]
        changes: dict[str, list[tuple[str, str, int | None, bool]]] = {}
        for ix in message.instructions:
            if keys[ix.program_id_index] != STRATEGY_PROGRAM or not ix.accounts:
                continue
            found = parse_record(bytes(ix.data))
            signer_index = ix.accounts[0]
            if found is None or signer_index >= message.header.num_required_signatures:
                continue
            wallet = str(keys[signer_index])
            if self.ledger.fund_for(found.strategy_id, found.mint) is None:
                continue
            fund = self._token(fund_account_address(wallet, found.strategy_id, found.mint))
            value = None if fund is None else fund.amount
            changes.setdefault(wallet, []).append((found.strategy_id, found.mint, value, found.kind == "deposit"))
        known = set(self.ledger.wallets())
        wallets = set(changes) | {str(k) for k in keys if str(k) in known}
        for key in (*keys, *loaded):
            held = self._token(key)
            if held is not None and held.owner != str(VAULT) and not self._is_fund_owner(held.owner):
                wallets.add(held.owner)
        self.sync_wallets(wallets, changes)

    def _is_fund_owner(self, address: str) -> bool:
        """Whether `address` is a token multisig owning fund accounts (not a wallet)."""
        account = self.runtime.get_account(Pubkey.from_string(address))
        return account is not None and account.owner == TOKEN_KEY

    def sync_wallets(
        self, wallets: Iterable[str], positions: dict[str, list[tuple[str, str, int | None, bool]]] | None = None
    ) -> None:
        """Set the wallets' SOL and known-token balances in the ledger to what the chain holds."""
        wallets = list(wallets)
        if not wallets:
            return
        holdings: dict[str, dict[str, int]] = {}
        wanted = set(wallets)
        for _, account in self.runtime.program_accounts(TOKEN_KEY):
            parsed = programs.parse_token_account(programs.TOKEN_PROGRAM, bytes(account.data)) if account.lamports else None
            if parsed is not None and parsed[1] in wanted and parsed[0] in CHAIN_MINTS:
                mint, owner, amount = parsed
                holdings.setdefault(owner, {}).setdefault(mint, 0)
                holdings[owner][mint] += amount
        for wallet in wallets:
            tokens = {NATIVE_SOL_PSEUDO_MINT: self.runtime.get_balance(Pubkey.from_string(wallet))}
            tokens.update({mint: holdings.get(wallet, {}).get(mint, 0) for mint in CHAIN_MINTS})
            self.ledger.sync_wallet(wallet, tokens, (positions or {}).get(wallet, ()))
