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

import base64
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from solders.account import Account
from solders.hash import Hash
from solders.litesvm import LiteSVM
from solders.message import Message
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction
from solders.transaction_metadata import FailedTransactionMetadata

from yieldcli.files import write_atomically
from yieldcli.sandbox.chain import store
from yieldcli.sandbox.chain.clock import (
    BLOCKHASH_WINDOW,
    FIRST_SLOT,
    HEIGHT_OFFSET,
    Clock,
    blockhash_bytes,
    new_genesis_hash,
)
from yieldcli.sandbox.chain.clock import now_ms as clock_now_ms
from yieldcli.sandbox.chain.execution import ExecutionHelpers, inner_instructions_json, token_amount_json
from yieldcli.sandbox.chain.knobs import FaultControls, Faults, Network
from yieldcli.sandbox.chain.lock import SyncedLock, file_stamp, folder_lock, remove_stale_temporaries
from yieldcli.sandbox.chain.records import (
    NOT_LANDED,
    RuntimeRpcError,
    SendOutcome,
    TxRecord,
    compute_budget,
    decode_wire_transaction,
    err_json,
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
from yieldcli.solana.transaction_errors import describe_error

log = logging.getLogger(__name__)

FIRST_BLOCK_HEIGHT = FIRST_SLOT - HEIGHT_OFFSET
MAX_RECORDS = 2_000
SLOT_HASHES_KEPT = 150


OnConfirmed = Callable[[VersionedTransaction, TxRecord], Any]


class Runtime(SetupHelpers, ExecutionHelpers, FaultControls):
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
        self._programs: dict[Pubkey, bytes] = {}  # added with add_program; not persisted
        self._records: OrderedDict[str, TxRecord] = OrderedDict()
        self._tracked: set[str] = set()
        self._held: list[VersionedTransaction] = []
        self._sends: dict[str, int] = {}  # times each signature was sent, for network.drop_sends
        self._stamp: tuple[int, int, int] | None = None
        self._svm = self._new_svm()
        self._clock = Clock(
            new_genesis_hash(),
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

    @property
    def blockhash_window(self) -> int:
        return self._clock.window

    def latest_blockhash(self) -> tuple[str, int]:
        """(blockhash, last valid block height)."""
        with self._lock:
            return self._clock.blockhash(), self._clock.height + self._clock.window

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

    # ---- accounts

    def get_account(self, address: Pubkey) -> Account | None:
        with self._lock:
            return live(self._svm.get_account(address))

    def get_balance(self, address: Pubkey) -> int:
        with self._lock:
            return self._svm.get_balance(address) or 0

    def add_program(self, program_id: Pubkey, elf: bytes) -> None:
        """Deploy a program (ELF bytes) at `program_id`. Programs are not saved: add them again on each start."""
        with self._lock:
            self._programs[program_id] = bytes(elf)
            self._svm.add_program(program_id, bytes(elf))

    def set_account(self, address: Pubkey, account: Account) -> None:
        with self._lock:
            self._svm.set_account(address, account)
            self._tracked.add(str(address))
            self._save()

    def minimum_balance_for_rent_exemption(self, size: int) -> int:
        with self._lock:
            return self._svm.minimum_balance_for_rent_exemption(size)

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
        info = self.token_account(programs.associated_token_address(owner, mint))
        return info[2] if info else 0

    # ---- transactions

    def send_transaction(self, tx: VersionedTransaction, *, skip_preflight: bool = False) -> SendOutcome:
        """What sendTransaction does: verify and simulate (unless skipped), then apply knobs and faults or land it."""
        with self._lock:
            signature = str(tx.signatures[0])
            if not skip_preflight:
                if not all(tx.verify_with_results()):
                    raise RuntimeRpcError(-32003, "Transaction signature verification failure")
                preflight = self.simulate(tx)
                if preflight["err"] is not None:
                    raise RuntimeRpcError(
                        -32002,
                        f"Transaction simulation failed: {describe_error(preflight['err'])}",
                        {**preflight, "accounts": None},
                    )
            if signature not in self._records:
                sent = self._sends[signature] = self._sends.get(signature, 0) + 1
                if sent <= self.network.drop_sends:
                    return SendOutcome(signature, False, None, "dropped")
                if compute_budget(tx.message)[0] < self.network.min_priority_fee:
                    # Passed over by every leader until its blockhash is gone: the minute that takes
                    # on mainnet passes at once, so the expiry never races the sender's own steps.
                    self._expire_blockhash_of(tx)
                    return SendOutcome(signature, False, None, "underpriced")
            if any(str(held.signatures[0]) == signature for held in self._held):
                # Sent again while held (a rebroadcast): a leader deduplicates by signature.
                return SendOutcome(signature, False, None, "pending")
            if self.faults.expire > 0:
                self.faults.expire -= 1
                self._expire_blockhash_of(tx)
                return SendOutcome(signature, False, None, "expire")
            if self.faults.pending > 0:
                self.faults.pending -= 1
                self._held.append(tx)
                return SendOutcome(signature, False, None, "pending")
            fail = self.faults.fail > 0
            if fail:
                self.faults.fail -= 1
            record = self._land(tx, fail=fail, notify=True)
            return SendOutcome(signature, record is not None, record, "fail" if fail else None)

    def recent_prioritization_fees(self) -> list[dict[str, int]]:
        """getRecentPrioritizationFees: per recent slot, the least price that landed (at least the minimum the sandbox asks)."""
        with self._lock:
            floor = self.network.min_priority_fee
            paid: dict[int, int] = {}
            for record in self._records.values():
                if record.err is None:
                    paid[record.slot] = min(paid.get(record.slot, record.compute_unit_price), record.compute_unit_price)
            first = max(self._clock.slot - SLOT_HASHES_KEPT + 1, 0)
            return [
                {"slot": s, "prioritizationFee": max(paid.get(s, 0), floor)} for s in range(first, self._clock.slot + 1)
            ]

    def _land(self, tx: VersionedTransaction, *, fail: bool = False, notify: bool = False) -> TxRecord | None:
        """Execute in the current slot if it can land; record it and close the slot. None if dropped."""
        signature = str(tx.signatures[0])
        if signature in self._records or not all(tx.verify_with_results()):
            return None
        if not self.lifetime_ok(tx):
            return None
        writable, readonly = self._loaded_addresses(tx)
        keys = [*tx.message.account_keys, *writable, *readonly]
        pre = [self._svm.get_balance(k) or 0 for k in keys]
        pre_tokens = self._token_balances(keys)
        result = self._execute_failing(tx, keys) if fail else self._svm.send_transaction(tx)
        if isinstance(result, FailedTransactionMetadata):
            err = err_json(result)
            name = err if isinstance(err, str) else next(iter(err), "") if isinstance(err, dict) else ""
            if name in NOT_LANDED or result.meta().fee() == 0:
                return None
            meta = result.meta()
        else:
            err = None
            meta = result
        self._tracked.update(str(k) for k in keys)
        self._tracked.update(str(lookup.account_key) for lookup in getattr(tx.message, "address_table_lookups", []))
        record = TxRecord(
            signature=signature,
            slot=self._clock.slot,
            err=err,
            logs=list(meta.logs()),
            fee=meta.fee(),
            units_consumed=meta.compute_units_consumed(),
            transaction=base64.b64encode(bytes(tx)).decode("ascii"),
            version="legacy" if isinstance(tx.message, Message) else 0,
            block_time=int(time.time()),
            pre_balances=pre,
            post_balances=[self._svm.get_balance(k) or 0 for k in keys],
            loaded_writable=[str(k) for k in writable],
            loaded_readonly=[str(k) for k in readonly],
            pre_token_balances=pre_tokens,
            post_token_balances=self._token_balances(keys),
            inner_instructions=inner_instructions_json(meta),
            compute_unit_price=compute_budget(tx.message)[0],
        )
        self._remember(record)
        self._sends.pop(signature, None)
        self._advance()
        self._save()
        if notify and err is None and self.on_confirmed is not None:
            try:
                self.on_confirmed(tx, record)
            except Exception:  # the chain accepted it; a listener's bug must not undo that
                log.exception("on_confirmed callback failed for %s", signature)
        return record

    def _remember(self, record: TxRecord) -> None:
        self._records[record.signature] = record
        while len(self._records) > MAX_RECORDS:
            self._records.popitem(last=False)

    # ---- persistence

    def save(self) -> None:
        with self._lock:
            self._save()

    def _save(self) -> None:
        if self.state_file is None:
            return
        accounts = {a: self._svm.get_account(Pubkey.from_string(a)) for a in self._tracked}
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
