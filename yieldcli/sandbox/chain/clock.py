"""Slots that pass with wall-clock time, and the blockhash of each slot.

A slot lasts `slot_ms` (400 ms, as on mainnet) whether or not anything lands, and a landed
transaction closes its slot at once. Every process on one state folder starts from the same saved
(slot, time) pair, so they agree on the current slot without writing the file on every read.

A slot's blockhash is derived from the chain's genesis hash and the slot number: separate processes
hand out the same blockhash for the same slot, a new chain never repeats an old one's blockhashes,
and a blockhash is valid for `window` blocks after its own, found again by recomputing the window.
"""

from __future__ import annotations

import hashlib
import os
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from yieldcli.addresses import b58encode

SLOT_MS = 400
BLOCKHASH_WINDOW = 150
# A new chain's genesis block is block 0, as a test validator's ledger starts; `--start-slot N` starts
# it at N instead, for mainnet-like numbers.
FIRST_SLOT = 0
# Chains saved before the height offset was kept started at slot 300,000,000 with block height 20,000,000 behind.
LEGACY_HEIGHT_OFFSET = 20_000_000
# Finalized trails confirmed by this many slots, as a one-node cluster's root trails its tip.
FINALITY_DEPTH = 32
# Slots whose hashes the SlotHashes sysvar holds, and recent prioritization fees cover.
SLOT_HASHES_KEPT = 150


def new_genesis_hash() -> str:
    """A genesis hash of this sandbox's own (not devnet's or mainnet's), made once per state folder."""
    return b58encode(os.urandom(32))


def blockhash_bytes(genesis: str, slot: int) -> bytes:
    return hashlib.sha256(b"yield-sandbox-blockhash" + genesis.encode() + struct.pack("<Q", slot)).digest()


def commitment_level(commitment: str | None) -> str:
    """processed, confirmed or finalized, from any name a validator reads (none given: finalized)."""
    if commitment in ("processed", "recent"):
        return "processed"
    if commitment in ("confirmed", "single", "singleGossip"):
        return "confirmed"
    return "finalized"


def set_sysvar_time(svm: Any, slot: int, unix_seconds: int) -> None:
    """The Clock sysvar at `slot` with the slot's wall-clock second, as a validator's (programs read it:
    Token-2022's interest-bearing mints, vesting schedules...); LiteSVM would keep it at 0."""
    from solders.clock import Clock as SysvarClock

    clock = svm.get_clock()
    svm.set_clock(
        SysvarClock(slot, clock.epoch_start_timestamp, clock.epoch, clock.leader_schedule_epoch, unix_seconds)
    )


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def height_offset_for(start_slot: int) -> int:
    """How far block height trails the slot on a chain started at `start_slot`: none from genesis at 0
    (no slot skipped), one slot in fifteen before a later start (mainnet's skip rate), so clients that
    mix the two up fail here."""
    return start_slot // 15


@dataclass
class Clock:
    genesis: str
    slot: int = FIRST_SLOT + 1  # the slot being made: the genesis block before it is complete
    started_ms: int = field(default_factory=now_ms)  # when `slot` began
    slot_ms: int = SLOT_MS
    window: int = BLOCKHASH_WINDOW
    revoked: list[str] = field(default_factory=list)  # blockhashes expired early (expire_blockhash)
    now: Callable[[], int] = now_ms
    # The oldest slot whose block is still known whole (older transactions were let go), and how many
    # transactions ever landed: getFirstAvailableBlock and getTransactionCount.
    first_block: int = -1
    transactions: int = 0
    height_offset: int = 0  # block height = slot - height_offset

    def __post_init__(self) -> None:
        if self.first_block < 0:
            self.first_block = self.slot - 1

    @property
    def height(self) -> int:
        return self.slot - self.height_offset

    @property
    def finality_depth(self) -> int:
        """Slots between confirmed and finalized: 32, or half a shorter blockhash window (so a
        finalized blockhash can still land)."""
        return min(FINALITY_DEPTH, self.window // 2)

    def commitment_slot(self, commitment: str | None) -> int:
        """The slot a commitment level stands at: processed is the slot being made, confirmed the last
        complete block, finalized `finality_depth` blocks before that (never before the first block)."""
        level = commitment_level(commitment)
        if level == "processed":
            return self.slot
        confirmed = self.slot - 1
        if level == "confirmed":
            return confirmed
        return max(confirmed - self.finality_depth, min(self.first_block, confirmed))

    def catch_up(self) -> bool:
        """Let the slots that passed since the last look pass; True if the slot moved."""
        if self.slot_ms <= 0:
            return False
        passed = (self.now() - self.started_ms) // self.slot_ms
        if passed <= 0:
            return False
        self.slot += passed
        self.started_ms += passed * self.slot_ms
        return True

    def advance(self, slots: int = 1) -> None:
        """Close the current slot now (and `slots - 1` empty ones after it)."""
        self.slot += slots
        self.started_ms = self.now()

    def blockhash(self, slot: int | None = None) -> str:
        return b58encode(blockhash_bytes(self.genesis, self.slot if slot is None else slot))

    def last_valid_height(self, blockhash: str) -> int | None:
        """The last block height at which `blockhash` may land; None if it was never issued here or was revoked."""
        if blockhash in self.revoked:
            return None
        # Recent blockhashes first: that is where almost every lookup ends. The hash handed out in
        # `slot` is the hash of block `slot - 1`: valid, as a validator counts, `window` blocks after it.
        for slot in range(self.slot, max(self.slot - self.window - 1, -1), -1):  # none before genesis
            if self.blockhash(slot) == blockhash:
                return slot - 1 - self.height_offset + self.window
        return None

    def revoke_current(self) -> None:
        self.revoked = [self.blockhash(), *self.revoked][: self.window]

    def to_json(self) -> dict[str, Any]:
        return {
            "genesis": self.genesis,
            "slot": self.slot,
            "started_ms": self.started_ms,
            "revoked": self.revoked,
            "first_block": self.first_block,
            "transactions": self.transactions,
            "height_offset": self.height_offset,
        }
