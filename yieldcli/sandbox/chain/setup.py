"""Setting up the sandbox chain: faucet airdrops, mints at real addresses, token accounts, lookup tables.

Each is a real transaction signed by a sandbox-held key, so it has a status like any other.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING

from solders.account import Account
from solders.address_lookup_table_account import AddressLookupTable
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.token.state import Mint
from solders.transaction import VersionedTransaction

from yieldcli.sandbox.chain.records import RuntimeRpcError, TxRecord
from yieldcli.sandbox.demo import METADATA_TOKENS, TOKEN_2022_TOKENS
from yieldcli.solana import programs, token_layout, token_metadata
from yieldcli.solana import strategy_program as sp
from yieldcli.tokens import KNOWN_TOKENS, WSOL_MINT

if TYPE_CHECKING:
    from solders.instruction import Instruction
    from solders.litesvm import LiteSVM

    from yieldcli.sandbox.chain.clock import Clock
    from yieldcli.sandbox.chain.lock import SyncedLock

LAMPORTS_PER_SOL = 1_000_000_000
# A deterministic authority for every sandbox mint, so separate processes agree on it.
SANDBOX_AUTHORITY = Keypair.from_seed(hashlib.sha256(b"yield sandbox mint authority").digest())
SANDBOX_FAUCET = Keypair.from_seed(hashlib.sha256(b"yield sandbox faucet").digest())
FAUCET_TOP_UP = 1_000_000 * 1_000_000_000

_TOKEN = Pubkey.from_string(programs.TOKEN_PROGRAM)
_TOKEN_2022 = Pubkey.from_string(programs.TOKEN_2022_PROGRAM)
_WSOL = Pubkey.from_string(WSOL_MINT)
_U64_MAX = 2**64 - 1


# The accounts of a mint with a transfer fee and a transfer hook carry the withheld fee and the hook's flag.
_ISSUER_ACCOUNT_EXTENSIONS = (
    (token_layout.TRANSFER_FEE_AMOUNT, bytes(8)),
    (token_layout.TRANSFER_HOOK_ACCOUNT, b"\x00"),
)


def issuer_extensions(mint: Pubkey) -> list[tuple[int, bytes]]:
    """The real PYUSD's extensions, its issuer being the sandbox authority: a metadata pointer to itself, a
    permanent delegate, a transfer hook with no program set, and a transfer-fee config at 0 basis points."""
    issuer = bytes(SANDBOX_AUTHORITY.pubkey())
    no_fee = struct.pack("<QQH", 0, 0, 0)  # epoch, maximum fee, basis points
    return [
        (token_layout.METADATA_POINTER, issuer + bytes(mint)),
        (token_layout.PERMANENT_DELEGATE, issuer),
        (token_layout.TRANSFER_HOOK, issuer + bytes(32)),
        (token_layout.TRANSFER_FEE_CONFIG, issuer + issuer + struct.pack("<Q", 0) + no_fee + no_fee),
    ]


class SetupHelpers:
    """Parts of `Runtime` built on its `execute`, `set_account` and lock."""

    _svm: LiteSVM
    _lock: SyncedLock

    if TYPE_CHECKING:  # provided by `Runtime`, the class these helpers are mixed into

        def minimum_balance_for_rent_exemption(self, size: int) -> int: ...
        def set_account(self, address: Pubkey, account: Account) -> None: ...
        def get_account(self, address: Pubkey) -> Account | None: ...
        def _land(self, tx: VersionedTransaction, *, fail: bool = False, notify: bool = False) -> TxRecord | None: ...

    _clock: Clock
    _tracked: set[str]

    def airdrop(self, address: Pubkey, lamports: int) -> str:
        """A real transfer from the sandbox faucet, so the airdrop has a status and a transaction like any other."""
        with self._lock:
            faucet = SANDBOX_FAUCET.pubkey()
            balance = self._svm.get_balance(faucet) or 0
            if balance < lamports + LAMPORTS_PER_SOL:
                self._svm.set_account(
                    faucet, Account(balance + lamports + FAUCET_TOP_UP, b"", Pubkey.default(), False, _U64_MAX)
                )
                self._tracked.add(str(faucet))
            record = self.execute(
                [transfer(TransferParams(from_pubkey=faucet, to_pubkey=address, lamports=lamports))], [SANDBOX_FAUCET]
            )
            return record.signature

    def create_mint(
        self,
        decimals: int,
        *,
        address: Pubkey | None = None,
        authority: Pubkey | None = SANDBOX_AUTHORITY.pubkey(),
        freeze_authority: Pubkey | None = None,
    ) -> Pubkey:
        """A token mint at `address` (a fresh one if None), set directly so real mint addresses work."""
        mint = address if address is not None else Keypair().pubkey()
        data = bytes(
            Mint(
                mint_authority=authority,
                supply=0,
                decimals=decimals,
                is_initialized=True,
                freeze_authority=freeze_authority,
            )
        )
        lamports = self.minimum_balance_for_rent_exemption(len(data))
        self.set_account(mint, Account(lamports, data, _TOKEN, False, _U64_MAX))
        return mint

    def install_known_mints(self) -> None:
        """Mints of the service's tokens at their real addresses; wrapped SOL has no mint authority."""
        with self._lock:
            for token in KNOWN_TOKENS:
                mint = Pubkey.from_string(token.mint)
                if self._svm.get_account(mint) is None:
                    self.create_mint(
                        token.decimals,
                        address=mint,
                        authority=None if token.mint == WSOL_MINT else SANDBOX_AUTHORITY.pubkey(),
                    )
            for _symbol, address, decimals, _name in TOKEN_2022_TOKENS:
                mint = Pubkey.from_string(address)
                if self._svm.get_account(mint) is None:
                    self.create_token_2022_mint(decimals, address=mint, extensions=issuer_extensions(mint))
                    self._set_vault(mint, _ISSUER_ACCOUNT_EXTENSIONS)
            for symbol, address, decimals, name, program in METADATA_TOKENS:
                mint = Pubkey.from_string(address)
                if self._svm.get_account(mint) is None:
                    self._create_described_mint(mint, decimals, symbol, name, token_2022=program == "token-2022")

    def _create_described_mint(self, mint: Pubkey, decimals: int, symbol: str, name: str, *, token_2022: bool) -> None:
        """A mint whose symbol and name are only in its on-chain metadata: a Token-2022 mint pointing to its
        own metadata extension, or an SPL Token mint with a Metaplex metadata account (set directly: the
        sandbox runs no Metaplex program, and a reader only reads the account)."""
        issuer = SANDBOX_AUTHORITY.pubkey()
        if token_2022:
            described = token_metadata.token_2022_value(str(mint), issuer, name, symbol)
            pointer = (token_layout.METADATA_POINTER, bytes(issuer) + bytes(mint))
            self.create_token_2022_mint(
                decimals, address=mint, extensions=[pointer, (token_metadata.TOKEN_METADATA, described)]
            )
            return
        self.create_mint(decimals, address=mint)
        data = token_metadata.metaplex_data(str(mint), issuer, name, symbol)
        lamports = self.minimum_balance_for_rent_exemption(len(data))
        address = Pubkey.from_string(token_metadata.metaplex_address(str(mint)))
        self.set_account(
            address, Account(lamports, data, Pubkey.from_string(token_metadata.METAPLEX_PROGRAM), False, _U64_MAX)
        )

    def _set_vault(self, mint: Pubkey, extensions: Sequence[tuple[int, bytes]]) -> None:
        """The strategy program's vault of a Token-2022 mint whose accounts need extensions (a transfer fee's
        withheld amount, a transfer hook's flag): its InitVault makes a 165-byte account, which Token-2022
        refuses for such a mint, so the vault is set directly as InitializeAccount3 would make it."""
        vault = sp.vault_address(mint)
        if self._svm.get_account(vault) is not None:
            return
        base = bytes(mint) + bytes(sp.authority_address()) + bytes(8 + 36) + b"\x01" + bytes(12 + 8 + 36)
        tlv = b"".join(struct.pack("<HH", kind, len(value)) + value for kind, value in extensions)
        data = base + bytes([token_layout.ACCOUNT_TYPE_ACCOUNT]) + tlv
        lamports = self.minimum_balance_for_rent_exemption(len(data))
        self.set_account(vault, Account(lamports, data, _TOKEN_2022, False, _U64_MAX))

    def create_token_2022_mint(
        self, decimals: int, *, address: Pubkey | None = None, extensions: Sequence[tuple[int, bytes]] | None = None
    ) -> Pubkey:
        """A Token-2022 mint of the sandbox authority, set directly; by default with one extension, a
        metadata pointer to itself (as published stablecoins have), so its account is base + extensions."""
        mint = address if address is not None else Keypair().pubkey()
        if extensions is None:
            extensions = [(token_layout.METADATA_POINTER, bytes(SANDBOX_AUTHORITY.pubkey()) + bytes(mint))]
        data = token_layout.mint_data(decimals, authority=SANDBOX_AUTHORITY.pubkey(), extra=extensions)
        lamports = self.minimum_balance_for_rent_exemption(len(data))
        self.set_account(mint, Account(lamports, data, _TOKEN_2022, False, _U64_MAX))
        return mint

    def token_program(self, mint: Pubkey) -> Pubkey:
        """The program that owns `mint` (SPL Token or Token-2022): the chain says, SPL Token when it has no mint."""
        account = self.get_account(mint)
        return account.owner if account is not None and str(account.owner) in programs.TOKEN_PROGRAMS else _TOKEN

    def associated_token_address(self, owner: Pubkey, mint: Pubkey) -> Pubkey:
        """`owner`'s associated token account of `mint`, derived with the program that owns the mint."""
        return programs.associated_token_address(owner, mint, self.token_program(mint))

    def create_ata_instruction(self, payer: Pubkey, owner: Pubkey, mint: Pubkey) -> Instruction:
        return programs.create_associated_token_account(payer, owner, mint, token_program=self.token_program(mint))

    def _fund_authority(self, lamports: int) -> None:
        balance = self._svm.get_balance(SANDBOX_AUTHORITY.pubkey()) or 0
        if balance < lamports + LAMPORTS_PER_SOL:
            self.airdrop(SANDBOX_AUTHORITY.pubkey(), lamports + 100 * LAMPORTS_PER_SOL)

    def execute(
        self, instructions: Sequence[Instruction], signers: Sequence[Keypair], *, payer: Keypair | None = None
    ) -> TxRecord:
        """Run instructions in a legacy transaction signed by `signers` (payer: the first, or `payer`);
        raise on failure."""
        with self._lock:
            fee_payer = payer or signers[0]
            everyone = [fee_payer, *(s for s in signers if s.pubkey() != fee_payer.pubkey())]
            # Legacy, so a client that asks for blocks without maxSupportedTransactionVersion reads them.
            message = Message.new_with_blockhash(
                list(instructions), fee_payer.pubkey(), Hash.from_string(self._clock.blockhash())
            )
            tx = VersionedTransaction(message, everyone)
            record = self._land(tx)
            if record is None or record.err is not None:
                reason = "did not land" if record is None else json.dumps(record.err)
                raise RuntimeRpcError(
                    -32603, f"sandbox setup transaction failed: {reason}", {"logs": record.logs if record else []}
                )
            return record

    def create_associated_token_account(self, owner: Pubkey, mint: Pubkey) -> Pubkey:
        with self._lock:
            self._fund_authority(0)
            self.execute([self.create_ata_instruction(SANDBOX_AUTHORITY.pubkey(), owner, mint)], [SANDBOX_AUTHORITY])
            return self.associated_token_address(owner, mint)

    def mint_to(self, owner: Pubkey, mint: Pubkey, amount: int) -> Pubkey:
        """Give `owner` `amount` base units of `mint` in its associated token account (created if needed).

        For wrapped SOL the authority transfers lamports into the account and syncs it.
        """
        with self._lock:
            ata = self.associated_token_address(owner, mint)
            create = self.create_ata_instruction(SANDBOX_AUTHORITY.pubkey(), owner, mint)
            if mint == _WSOL:
                self._fund_authority(amount)
                ixs = [
                    create,
                    transfer(TransferParams(from_pubkey=SANDBOX_AUTHORITY.pubkey(), to_pubkey=ata, lamports=amount)),
                    programs.token_sync_native(ata),
                ]
            else:
                self._fund_authority(0)
                mint_to = programs.token_mint_to(
                    mint, ata, SANDBOX_AUTHORITY.pubkey(), amount, token_program=self.token_program(mint)
                )
                ixs = [create, mint_to]
            self.execute(ixs, [SANDBOX_AUTHORITY])
            return ata

    def create_lookup_table(self, addresses: Sequence[Pubkey] = (), *, authority: Keypair | None = None) -> Pubkey:
        """Create an address lookup table (and extend it with `addresses`); usable from the next slot.

        `authority` (default: the sandbox authority) pays and owns it.
        """
        with self._lock:
            if authority is None:
                authority = SANDBOX_AUTHORITY
                self._fund_authority(0)
            ix, table = programs.create_lookup_table(authority.pubkey(), authority.pubkey(), self._clock.slot)
            self.execute([ix], [authority])
            if addresses:
                self.extend_lookup_table(table, addresses, authority=authority)
            return table

    def extend_lookup_table(
        self, table: Pubkey, addresses: Sequence[Pubkey], *, authority: Keypair | None = None
    ) -> None:
        with self._lock:
            authority = authority or SANDBOX_AUTHORITY
            for start in range(0, len(addresses), 20):
                chunk = list(addresses[start : start + 20])
                self.execute(
                    [programs.extend_lookup_table(table, authority.pubkey(), authority.pubkey(), chunk)], [authority]
                )

    def lookup_table_addresses(self, table: Pubkey) -> list[Pubkey]:
        account = self.get_account(table)
        if account is None:
            return []
        return list(AddressLookupTable.deserialize(bytes(account.data)).addresses)
