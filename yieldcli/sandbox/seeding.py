"""Seeding a fresh sandbox chain from the ledger, and bringing the ledger up to date with the chain."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from solders.address_lookup_table_account import AddressLookupTable
from solders.instruction import Instruction
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from yieldcli.sandbox import demo
from yieldcli.sandbox.runtime import SANDBOX_AUTHORITY, Runtime, TxRecord
from yieldcli.sandbox.vault import (
    CHAIN_MINTS,
    MINT_AUTHORITY,
    STRATEGY_PROGRAM,
    TOKEN_2022_KEY,
    TOKEN_KEY,
    U64_MAX,
    VAULT,
    VAULT_AUTHORITY,
    VAULT_FLOAT,
    WSOL_KEY,
    TokenState,
    fits_one_transaction,
    transfer_lamports,
)
from yieldcli.solana import programs
from yieldcli.solana import strategy_program as sp
from yieldcli.tokens import NATIVE_SOL_PSEUDO_MINT

if TYPE_CHECKING:
    from yieldcli.sandbox.ledger import Ledger

# Where an instruction of the strategy program names the position and the mint (README.md beside the program).
_POSITION_INDEX = {sp.DEPOSIT: 6, sp.WITHDRAW: 5, sp.CLOSE: 5, sp.CREDIT_YIELD: 5}
_MINT_INDEX = {sp.DEPOSIT: 3, sp.WITHDRAW: 2, sp.CLOSE: 2, sp.CREDIT_YIELD: 2}


class ChainLedgerSync:
    """The part of `StrategyChain` that keeps the chain and the ledger in step."""

    runtime: Runtime
    ledger: Ledger
    _rent: int  # rent-exempt lamports of a token account

    if TYPE_CHECKING:  # provided by `StrategyChain`, the class this part is mixed into

        def _token(self, address: Pubkey) -> TokenState | None: ...
        def _position(self, address: Pubkey) -> sp.Position | None: ...

    def _find_lookup_table(self) -> Pubkey | None:
        """The strategy's lookup table: made last when the chain is seeded, so it also says the seeding is done."""
        for address, account in self.runtime.program_accounts(
            Pubkey.from_string(programs.ADDRESS_LOOKUP_TABLE_PROGRAM)
        ):
            try:
                table = AddressLookupTable.deserialize(bytes(account.data))
            except BaseException as exc:  # pyo3 panics are BaseExceptions
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                continue
            if table.meta.authority == VAULT:
                return address
        return None

    def _seed(self) -> Pubkey:
        """Put on chain the strategy's vaults, what the ledger says the demo wallet holds (its tokens, and
        its positions: deposited by the demo wallet, their yield credited by the yield authority), and
        the lookup table.

        Each step tops up to the ledger's figure, so seeding again after an interruption adds nothing twice.
        """
        rt = self.runtime
        mints = [Pubkey.from_string(m) for m in CHAIN_MINTS]
        steps = [
            [sp.init_vault(VAULT, mint, token_program=rt.token_program(mint))]
            for mint in mints
            if rt.get_account(sp.vault_address(mint)) is None
        ]
        wallet = Pubkey.from_string(demo.DEMO_WALLET)
        tokens = self.ledger.wallet_tokens(demo.DEMO_WALLET)
        for mint in CHAIN_MINTS:
            mint_key = Pubkey.from_string(mint)
            top_up = tokens.get(mint, 0) - rt.token_balance(wallet, mint_key)
            if top_up > 0 and tokens[mint] <= U64_MAX:
                ata = rt.associated_token_address(wallet, mint_key)
                steps.append(
                    [
                        rt.create_ata_instruction(VAULT, wallet, mint_key),
                        *self._fill(ata, mint_key, top_up, rt.token_program(mint_key)),
                    ]
                )
        for strategy_id, mint, value, deposited in self.ledger.wallet_positions(demo.DEMO_WALLET):
            if mint not in CHAIN_MINTS or not 0 < value <= U64_MAX or not 0 < deposited <= value:
                continue
            mint_key = Pubkey.from_string(mint)
            program = rt.token_program(mint_key)
            address = sp.position_address(wallet, strategy_id, mint_key)
            held = self._position(address)
            step: list[Instruction] = []
            if held is None:
                ata = rt.associated_token_address(wallet, mint_key)
                step += [
                    rt.create_ata_instruction(VAULT, wallet, mint_key),
                    *self._fill(ata, mint_key, deposited, program),
                    sp.deposit(wallet, VAULT, ata, mint_key, strategy_id, deposited, token_program=program),
                ]
                if mint_key == WSOL_KEY and not tokens.get(mint):
                    # The demo wallet holds no wrapped SOL: the account used to deposit it goes again.
                    step.append(programs.token_close_account(ata, VAULT, wallet))
            earned = value - (held.balance if held is not None else deposited)
            if earned > 0:
                source = rt.associated_token_address(VAULT, mint_key)
                step += [
                    rt.create_ata_instruction(VAULT, VAULT, mint_key),
                    *self._fill(source, mint_key, earned, program),
                    sp.credit_yield(source, mint_key, address, earned, token_program=program),
                ]
            if step:
                steps.append(step)
        wrapped = sum(
            ix_lamports for step in steps for ix in step if (ix_lamports := transfer_lamports(ix)) is not None
        )
        if rt.get_balance(VAULT) < wrapped + VAULT_FLOAT:
            rt.airdrop(VAULT, wrapped + VAULT_FLOAT)
        self._execute_batched(steps)
        lamports = tokens.get(NATIVE_SOL_PSEUDO_MINT, 0) - rt.get_balance(wallet)
        if lamports > 0 and tokens[NATIVE_SOL_PSEUDO_MINT] <= U64_MAX:
            rt.airdrop(wallet, lamports)

        addresses = [sp.authority_address(), *(sp.vault_address(m) for m in mints), *mints]
        addresses += [
            Pubkey.from_string(x)
            for x in (
                programs.TOKEN_PROGRAM,
                programs.TOKEN_2022_PROGRAM,
                programs.ASSOCIATED_TOKEN_PROGRAM,
                programs.SYSTEM_PROGRAM,
                programs.COMPUTE_BUDGET_PROGRAM,
                str(STRATEGY_PROGRAM),
            )
        ]
        table = rt.create_lookup_table(list(dict.fromkeys(addresses)), authority=VAULT_AUTHORITY)
        rt.advance_slots(1)  # addresses added by extend are usable from the next slot
        return table

    @staticmethod
    def _fill(account: Pubkey, mint: Pubkey, amount: int, token_program: Pubkey) -> list[Instruction]:
        """Instructions giving a token account `amount` more: minted, or for WSOL lamports from the vault, synced."""
        if mint == WSOL_KEY:
            return [
                transfer(TransferParams(from_pubkey=VAULT, to_pubkey=account, lamports=amount)),
                programs.token_sync_native(account),
            ]
        return [programs.token_mint_to(mint, account, MINT_AUTHORITY, amount, token_program=token_program)]

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
        wallet (whose seeded positions it deposits itself) where they sign."""
        signing = {m.pubkey for ix in ixs for m in ix.accounts if m.is_signer}
        extra = [k for k in (SANDBOX_AUTHORITY, demo.demo_keypair()) if k.pubkey() in signing]
        self.runtime.execute(ixs, [VAULT_AUTHORITY, *extra])

    # -- following the chain

    def _on_confirmed(self, tx: VersionedTransaction, record: TxRecord) -> None:
        """A transaction landed without error: bring the positions and wallets it touched up to date,
        positions as their accounts on chain now record them."""
        message = tx.message
        loaded = [Pubkey.from_string(k) for k in (*record.loaded_writable, *record.loaded_readonly)]
        keys = [*message.account_keys, *loaded]
        changes: dict[str, list[tuple[str, str, int | None, int]]] = {}
        for ix in message.instructions:
            data = bytes(ix.data)
            if keys[ix.program_id_index] != STRATEGY_PROGRAM or not data or data[0] not in _POSITION_INDEX:
                continue
            indexes = bytes(ix.accounts)
            if len(indexes) <= _POSITION_INDEX[data[0]]:
                continue
            address = keys[indexes[_POSITION_INDEX[data[0]]]]
            held = self._position(address)
            if held is not None:
                change = self._position_change(held)
                if change is not None:
                    changes.setdefault(held.user, []).append(change)
            elif data[0] == sp.CLOSE:
                user, mint = str(keys[indexes[0]]), str(keys[indexes[_MINT_INDEX[sp.CLOSE]]])
                strategy_id = self._strategy_of_position(Pubkey.from_string(user), address, mint)
                if strategy_id is not None:
                    changes.setdefault(user, []).append((strategy_id, mint, None, 0))
        known = set(self.ledger.wallets())
        wallets = set(changes) | {str(k) for k in keys if str(k) in known}
        custody = {str(VAULT), str(sp.authority_address())}
        for key in keys:
            held_tokens = self._token(key)
            if held_tokens is not None and held_tokens.owner not in custody:
                wallets.add(held_tokens.owner)
        self.sync_wallets(wallets, changes)

    def catch_up(self) -> None:
        """Take every position account's figures where the ledger differs: a process may have stopped
        between a transaction landing (the chain saved) and the ledger's save."""
        changes: dict[str, list[tuple[str, str, int | None, int]]] = {}
        for _, account in self.runtime.program_accounts(STRATEGY_PROGRAM):
            held = sp.parse_position(str(account.owner), bytes(account.data))
            change = self._position_change(held) if held is not None else None
            if held is None or change is None:
                continue
            recorded = {
                (sid, mint): (value, deposited)
                for sid, mint, value, deposited in self.ledger.wallet_positions(held.user)
            }
            if recorded.get((change[0], change[1])) != (change[2], change[3]):
                changes.setdefault(held.user, []).append(change)
        for wallet, positions in changes.items():
            self.ledger.sync_wallet(wallet, None, positions)

    def _position_change(self, held: sp.Position) -> tuple[str, str, int | None, int] | None:
        """(strategy_id, mint, balance, deposited) of a position on chain, for a strategy and fund the ledger knows."""
        for strategy_id in self.ledger.strategy_ids():
            if sp.strategy_key(strategy_id) == held.strategy_key:
                if self.ledger.fund_for(strategy_id, held.mint) is None:
                    return None
                return strategy_id, held.mint, held.balance, held.deposited
        return None

    def _strategy_of_position(self, user: Pubkey, address: Pubkey, mint: str) -> str | None:
        """The strategy whose position of (user, mint) is at `address`, among the ledger's."""
        for strategy_id in self.ledger.strategy_ids():
            if sp.position_address(user, strategy_id, Pubkey.from_string(mint)) == address:
                return strategy_id if self.ledger.fund_for(strategy_id, mint) is not None else None
        return None

    def sync_wallets(
        self, wallets: Iterable[str], positions: dict[str, list[tuple[str, str, int | None, int]]] | None = None
    ) -> None:
        """Set the wallets' SOL and known-token balances in the ledger to what the chain holds."""
        wallets = list(wallets)
        if not wallets:
            return
        holdings: dict[str, dict[str, int]] = {}
        wanted = set(wallets)
        accounts = [a for program in (TOKEN_KEY, TOKEN_2022_KEY) for _, a in self.runtime.program_accounts(program)]
        for account in accounts:
            parsed = programs.parse_token_account(str(account.owner), bytes(account.data)) if account.lamports else None
            if parsed is not None and parsed[1] in wanted and parsed[0] in CHAIN_MINTS:
                mint, owner, amount = parsed
                holdings.setdefault(owner, {}).setdefault(mint, 0)
                holdings[owner][mint] += amount
        for wallet in wallets:
            tokens = {NATIVE_SOL_PSEUDO_MINT: self.runtime.get_balance(Pubkey.from_string(wallet))}
            tokens.update({mint: holdings.get(wallet, {}).get(mint, 0) for mint in CHAIN_MINTS})
            self.ledger.sync_wallet(wallet, tokens, (positions or {}).get(wallet, ()))
