"""The sandbox chain's blocks, as a validator's ledger holds them.

Every slot from the first kept one up to the one being made is a block (one node, none skipped); a
landed transaction closes its slot, so a block holds at most one, and most are empty. Only complete
blocks are served, so a block never changes once read: the slot being made is processed, the last
complete block confirmed, and finalized trails it by a fixed depth (see `Clock.commitment_slot`). A block's hash is the
blockhash handed out while the next slot was current: a transaction in slot s was built on the hash
of block s - 1, as on a real cluster.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from solders.transaction import VersionedTransaction

from yieldcli.addresses import b58encode
from yieldcli.sandbox.chain.clock import blockhash_bytes, commitment_level
from yieldcli.sandbox.chain.records import TxRecord


def writable_flags(header: Any, count: int) -> list[bool]:
    """Which of a message's `count` own account keys it may write, as its header says."""
    signers = header.num_required_signatures
    writable_signers = signers - header.num_readonly_signed_accounts
    writable_others = count - header.num_readonly_unsigned_accounts
    return [i < writable_signers if i < signers else i < writable_others for i in range(count)]


@dataclass(frozen=True)
class History:
    genesis: str
    first_block: int
    slot: int  # the current slot: its block is still being made
    started_ms: int  # when the current slot began
    slot_ms: int
    transactions: int  # ever landed
    records: tuple[TxRecord, ...]  # oldest first
    height_offset: int = 0
    confirmed: int = 0  # the last complete block
    finalized: int = 0
    _keys: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def by_slot(self) -> dict[int, list[TxRecord]]:
        slots: dict[int, list[TxRecord]] = {}
        for record in self.records:
            if record.slot >= self.first_block:
                slots.setdefault(record.slot, []).append(record)
        return slots

    def has_block(self, slot: int) -> bool:
        return self.first_block <= slot <= self.confirmed

    def commitment_slot(self, commitment: str | None) -> int:
        level = commitment_level(commitment)
        return self.slot if level == "processed" else self.confirmed if level == "confirmed" else self.finalized

    def status_of(self, slot: int) -> str:
        """The confirmationStatus of a transaction landed in `slot`."""
        return "finalized" if slot <= self.finalized else "confirmed" if slot <= self.confirmed else "processed"

    def blockhash(self, slot: int) -> str:
        return b58encode(blockhash_bytes(self.genesis, slot + 1))

    def parent(self, slot: int) -> tuple[int, str]:
        """(parentSlot, previousBlockhash): the genesis block at slot 0 is its own parent, on the zero hash."""
        if slot == 0:
            return 0, b58encode(bytes(32))
        return slot - 1, self.blockhash(slot - 1)

    def block_height(self, slot: int) -> int:
        return slot - self.height_offset

    def block_time(self, slot: int) -> int:
        """When the block was made: its transaction's time, else counted back from the current slot."""
        landed = self.by_slot.get(slot)
        if landed:
            return landed[0].block_time
        return (self.started_ms - max(self.slot - slot, 0) * self.slot_ms) // 1000

    def account_keys(self, record: TxRecord) -> list[str]:
        """Every account the transaction named: its own keys, then those loaded from lookup tables."""
        return self._described(record)[0]

    def written(self, record: TxRecord) -> list[str]:
        """The accounts the transaction could write (what account and program subscriptions hear about)."""
        return self._described(record)[1]

    def _described(self, record: TxRecord) -> tuple[list[str], list[str]]:
        found = self._keys.get(record.signature)
        if found is None:
            message = VersionedTransaction.from_bytes(base64.b64decode(record.transaction)).message
            own = [str(k) for k in message.account_keys]
            writable = [k for k, w in zip(own, writable_flags(message.header, len(own)), strict=True) if w]
            found = (own + record.loaded_writable + record.loaded_readonly, writable + record.loaded_writable)
            self._keys[record.signature] = found
        return found
