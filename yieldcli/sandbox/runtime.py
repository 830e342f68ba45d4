"""The sandbox's chain: a real SVM (solders' LiteSVM) with a clock, persistence and fault knobs.

LiteSVM runs transactions for real (System, SPL Token, Token-2022, ATA, Memo, ALT, Compute Budget)
but has no blocks and no history across processes. This wrapper adds what an RPC client relies on:

- Slots that pass with wall-clock time, each with its blockhash, valid for a window of blocks
  (see `chain/clock.py`); a landed transaction closes its slot.
- Statuses of landed transactions, kept by signature, for getSignatureStatuses/getTransaction.
- Persistence: accounts the runtime created or that a landed transaction touched are saved to a
  JSON file after every change. Every process on one state folder works under the folder's lock
  and reloads the file when another process replaced it, so none loses another's transaction.
- Faults and network knobs for tests (`chain/knobs.py`).

All public methods are thread-safe and process-safe (they run under the folder lock).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from solders.account import Account
from solders.hash import Hash
from solders.litesvm import LiteSVM
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from yieldcli.files import write_atomically
from yieldcli.sandbox.chain import store
from yieldcli.sandbox.chain.clock import (
    BLOCKHASH_WINDOW,
    FIRST_SLOT,
    LEGACY_HEIGHT_OFFSET,
    SLOT_HASHES_KEPT,
    Clock,
    blockhash_bytes,
    height_offset_for,
    new_genesis_hash,
    set_sysvar_time,
)
from yieldcli.sandbox.chain.clock import now_ms as clock_now_ms
from yieldcli.sandbox.chain.execution import token_amount_json
from yieldcli.sandbox.chain.history import History
from yieldcli.sandbox.chain.knobs import FaultControls, Faults, Network
from yieldcli.sandbox.chain.landing import Landing, OnConfirmed
from yieldcli.sandbox.chain.lock import SyncedLock, file_stamp, folder_lock, remove_stale_temporaries
from yieldcli.sandbox.chain.past import AccountPast
from yieldcli.sandbox.chain.records import (
    RuntimeRpcError,
    SendOutcome,
    TxRecord,
    decode_wire_transaction,
    live,
)
from yieldcli.sandbox.chain.setup import (
    FAUCET_TOP_UP,
    LAMPORTS_PER_SOL,
    SANDBOX_AUTHORITY,
    SANDBOX_FAUCET,
    SetupHelpers,
)
from yieldcli.solana import programs

FIRST_BLOCK_HEIGHT = FIRST_SLOT - height_offset_for(FIRST_SLOT)


class Runtime(SetupHelpers, Landing, FaultControls):
    """LiteSVM plus a clock, blockhash lifetimes, statuses, persistence and faults.

    `on_confirmed(tx, record)` is called after each transaction sent through `send_transaction`
    (or released from pending) lands without error. It runs under the runtime's lock: it may call
    the runtime, but must not wait for another thread that does.
    """

    def __init__(
        self,
        state_file: str | os.PathLike[str] | None = None,
        *,
        blockhash_window: int | None = None,
        known_mints: bool = True,
        on_confirmed: OnConfirmed | None = None,
        network: Network | None = None,
        now_ms: Callable[[], int] = clock_now_ms,
    ):
        network = network or Network()
        self._now_ms = now_ms
        if blockhash_window is not None:
            network = replace(network, blockhash_window=blockhash_window)
        self.network = network
        self.state_file = Path(state_file) if state_file is not None else None
        raw_lock = folder_lock(self.state_file.parent) if self.state_file is not None else threading.RLock()
        self._lock = SyncedLock(raw_lock, self._sync)
        self.faults = Faults()
        self.on_confirmed = on_confirmed
        self.landed_hooks: list[Callable[[], object]] = []
        self._programs: dict[Pubkey, bytes] = {}  # added with add_program; not persisted
        self._records: OrderedDict[str, TxRecord] = OrderedDict()
        self._tracked: set[str] = set()
        self._past = AccountPast()  # what reads at an older commitment roll back
        self._held: list[VersionedTransaction] = []
        self._sends: dict[str, int] = {}  # times each signature was sent, for network.drop_sends
        self._stamp: tuple[int, int, int] | None = None
        self._svm = self._new_svm()
        start = network.start_slot
        self._clock = Clock(
            new_genesis_hash(),
            slot=start + 1,
            first_block=start,
            height_offset=height_offset_for(start),
            started_ms=now_ms(),
            slot_ms=network.slot_ms,
            window=network.blockhash_window,
            now=now_ms,
        )
        with raw_lock:
            if self.state_file is not None:
                remove_stale_temporaries(self.state_file)
            if self.state_file is not None and self.state_file.exists():
                self._load()
            else:
                self._new_slot()
            if known_mints:
                self.install_known_mints()
            self._save()

    # ---- clock and blockhashes

    @staticmethod
    def _new_svm() -> LiteSVM:
        svm = LiteSVM()
        # Signatures and blockhash lifetimes are checked here, per block height, not by LiteSVM
        # (it only knows its single latest blockhash, and unsigned transactions must simulate).
        svm.with_sigverify(False)
        svm.with_blockhash_check(False)
        return svm

    def _sync(self) -> None:
        """Under the lock: take what another process saved, then let the slots that passed pass."""
        if self.state_file is not None and file_stamp(self.state_file) != self._stamp:
            self._load()
        if self._clock.catch_up():
            self._new_slot()

    def _new_slot(self) -> None:
        """Tell LiteSVM the slot moved: its clock, its own blockhash (durable nonces use it) and SlotHashes."""
        slot = self._clock.slot
        self._svm.warp_to_slot(slot)
        set_sysvar_time(self._svm, slot, self._clock.started_ms // 1000)
        self._svm.expire_blockhash()
        # SlotHashes holds the current slot too, so a slot read by getSlot can create a lookup table.
        genesis = self._clock.genesis
        self._svm.set_slot_hashes(
            [(s, Hash(blockhash_bytes(genesis, s))) for s in range(slot, max(slot - SLOT_HASHES_KEPT, 0), -1)]
        )

    def _expire_blockhash_of(self, tx: VersionedTransaction) -> None:
        """Move the chain past the last block height at which `tx` could land."""
        last = self.last_valid_block_height(str(tx.message.recent_blockhash))
        target = (last if last is not None else self._clock.height + self._clock.window) + 1
        self._advance(max(1, target - self._clock.height))
        self._save()

    def _advance(self, slots: int = 1) -> None:
        self._clock.advance(slots)
        self._new_slot()

    @property
    def lock(self) -> SyncedLock:
        """The runtime's lock, for a caller whose several steps must not interleave with another process's."""
        return self._lock

    @property
    def genesis_hash(self) -> str:
        with self._lock:
            return self._clock.genesis

    @property
    def slot(self) -> int:
        with self._lock:
            return self._clock.slot

    @property
    def block_height(self) -> int:
        with self._lock:
            return self._clock.height

    def commitment_slot(self, commitment: str | None) -> int:
        """The slot of a commitment level (processed, confirmed, finalized; None: finalized)."""
        with self._lock:
            return self._clock.commitment_slot(commitment)

    def height_of(self, slot: int) -> int:
        return slot - self._clock.height_offset

    @property
    def blockhash_window(self) -> int:
        return self._clock.window

    def latest_blockhash(self, commitment: str | None = "processed") -> tuple[str, int]:
        """(blockhash, last valid block height) of the bank at `commitment` (the newest by default)."""
        with self._lock:
            clock = self._clock
            block = min(clock.commitment_slot(commitment), clock.slot - 1)  # the newest complete block there
            return clock.blockhash(block + 1), block - clock.height_offset + clock.window

    def last_valid_block_height(self, blockhash: str) -> int | None:
        with self._lock:
            return self._clock.last_valid_height(blockhash)

    def is_blockhash_valid(self, blockhash: str) -> bool:
        with self._lock:
            last = self._clock.last_valid_height(blockhash)
            return last is not None and self._clock.height <= last

    def advance_slots(self, count: int = 1) -> int:
        """Let `count` empty slots pass (block height moves with them); returns the new block height."""
        with self._lock:
            if count > 0:
                self._advance(count)
                self._save()
            return self._clock.height

    def expire_blockhash(self) -> None:
        """Invalidate the current blockhash at once; the next slot brings a fresh one."""
        with self._lock:
            self._clock.revoke_current()
            self._advance()
            self._save()

    def history(self) -> History:
        """What the blocks are made of, at one moment: getBlock and its kin read it."""
        with self._lock:
            clock = self._clock
            return History(
                clock.genesis,
                clock.first_block,
                clock.slot,
                clock.started_ms,
                clock.slot_ms,
                clock.transactions,
                tuple(self._records.values()),
                height_offset=clock.height_offset,
                confirmed=clock.commitment_slot("confirmed"),
                finalized=clock.commitment_slot("finalized"),
            )

    # ---- accounts

    def get_account(self, address: Pubkey) -> Account | None:
        with self._lock:
            return live(self._svm.get_account(address))

    def get_balance(self, address: Pubkey) -> int:
        with self._lock:
            return self._svm.get_balance(address) or 0

    def account_at(self, address: Pubkey, commitment: str | None) -> tuple[int, Account | None]:
        """(slot, the account there) at a commitment level (None: finalized), as a node's bank at that level."""
        with self._lock:
            slot = self._clock.commitment_slot(commitment)
            return slot, self.account_as_of(address, slot)

    def account_as_of(self, address: Pubkey, slot: int) -> Account | None:
        """The account as it stood once block `slot` was made (no older than the finalized slot)."""
        with self._lock:
            changed, before = self._past.one_as_of(str(address), slot)
            return live(before) if changed else live(self._svm.get_account(address))

    def program_accounts_at(
        self, program_id: Pubkey, commitment: str | None
    ) -> tuple[int, list[tuple[Pubkey, Account]]]:
        """(slot, the program's accounts there) at a commitment level, as `account_at`."""
        with self._lock:
            slot = self._clock.commitment_slot(commitment)
            found = {str(k): a for k, a in self._svm.get_program_accounts(program_id)}
            for address, before in self._past.as_of(slot).items():
                if before is not None and before.owner == program_id:
                    found[address] = before
                else:
                    found.pop(address, None)
            return slot, [(Pubkey.from_string(k), a) for k, a in found.items()]

    def _remember_before(self, addresses: list[Pubkey], slot: int | None = None) -> None:
        """Before a change in `slot` (the current one): the addresses' values, for reads at older commitments."""
        before = {str(a): live(self._svm.get_account(a)) for a in addresses}
        self._past.record(self._clock.slot if slot is None else slot, before, self._clock.commitment_slot("finalized"))

    def add_program(self, program_id: Pubkey, elf: bytes) -> None:
        """Deploy a program (ELF bytes) at `program_id`. Programs are not saved: add them again on each start."""
        with self._lock:
            self._programs[program_id] = bytes(elf)
            self._svm.add_program(program_id, bytes(elf))

    def set_account(self, address: Pubkey, account: Account) -> None:
        with self._lock:
            self._remember_before([address], self._clock.slot - 1)  # as if in the last block: confirmed sees it
            self._svm.set_account(address, account)
            self._tracked.add(str(address))
            self._save()

    def minimum_balance_for_rent_exemption(self, size: int) -> int:
        with self._lock:
            return self._svm.minimum_balance_for_rent_exemption(size)

    def accounts(self) -> list[tuple[Pubkey, Account]]:
        """Every account this chain made or a transaction touched, not programs or sysvars (getSupply)."""
        with self._lock:
            found = ((Pubkey.from_string(a), live(self._svm.get_account(Pubkey.from_string(a)))) for a in self._tracked)
            return [(k, a) for k, a in found if a is not None and not a.executable]

    def program_accounts(self, program_id: Pubkey) -> list[tuple[Pubkey, Account]]:
        with self._lock:
            return list(self._svm.get_program_accounts(program_id))

    def token_account(self, address: Pubkey) -> tuple[str, str, int] | None:
        """(mint, owner, amount) of a token account, else None."""
        account = self.get_account(address)
        return None if account is None else programs.parse_token_account(str(account.owner), bytes(account.data))

    def mint_decimals(self, mint: Pubkey) -> int | None:
        account = self.get_account(mint)
        return None if account is None else programs.parse_mint_decimals(str(account.owner), bytes(account.data))

    def token_balance(self, owner: Pubkey, mint: Pubkey) -> int:
        """The balance of `owner`'s associated token account for `mint` (0 when it does not exist)."""
        info = self.token_account(self.associated_token_address(owner, mint))
        return info[2] if info else 0

    # ---- persistence

    def save(self) -> None:
        with self._lock:
            self._save()

    def _save(self) -> None:
        if self.state_file is None:
            return
        accounts = {a: self._svm.get_account(Pubkey.from_string(a)) for a in self._tracked}
        if len(self._records) > store.MAX_PERSISTED_RECORDS:
            # Blocks older than the oldest saved transaction are no longer whole for another process.
            oldest = list(self._records.values())[-store.MAX_PERSISTED_RECORDS]
            self._clock.first_block = max(self._clock.first_block, oldest.slot)
        write_atomically(self.state_file, store.dump(accounts, self._clock, list(self._records.values())))
        self._stamp = file_stamp(self.state_file)

    def _load(self) -> None:
        """Replace what this process holds with the saved chain (another process may have changed it)."""
        assert self.state_file is not None
        stamp = file_stamp(self.state_file)
        accounts, clock, records = store.load(self.state_file)
        svm = self._new_svm()
        for program_id, elf in self._programs.items():
            svm.add_program(program_id, elf)
        for address, account in accounts.items():
            svm.set_account(Pubkey.from_string(address), account)
        self._svm = svm
        self._past.forget()
        self._tracked = set(accounts)
        self._records = OrderedDict((r.signature, r) for r in records)
        self._clock = Clock(
            clock["genesis"],
            slot=clock["slot"],
            started_ms=clock["started_ms"],
            slot_ms=self.network.slot_ms,
            window=self.network.blockhash_window,
            revoked=[str(h) for h in clock.get("revoked", [])],
            now=self._now_ms,
            # A chain saved before these were kept: its oldest record's block, and the records it has.
            first_block=int(clock.get("first_block", records[0].slot if records else clock["slot"])),
            transactions=int(clock.get("transactions", len(records))),
            height_offset=int(clock.get("height_offset", LEGACY_HEIGHT_OFFSET)),
        )
        self._clock.catch_up()
        self._new_slot()
        self._stamp = stamp


__all__ = [
    "BLOCKHASH_WINDOW",
    "FAUCET_TOP_UP",
    "LAMPORTS_PER_SOL",
    "token_amount_json",
    "FIRST_BLOCK_HEIGHT",
    "History",
    "Faults",
    "Network",
    "Runtime",
    "RuntimeRpcError",
    "SANDBOX_AUTHORITY",
    "SANDBOX_FAUCET",
    "SendOutcome",
    "TxRecord",
    "decode_wire_transaction",
]
