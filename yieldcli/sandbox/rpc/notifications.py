"""What the sandbox's PubSub tells, and when, as a validator's subscriptions do.

Account, program and logs subscriptions are told of a block once it reaches the subscription's
commitment (none named: finalized, a validator's default): at once for `processed` and `confirmed`
(a landed transaction closes its slot), 32 blocks later for `finalized`. Each block is told with the
accounts as they stood once it was made and its own slot as `context.slot`, as a one-node cluster,
whose levels move a block at a time, tells each. A signature subscription is told once its
transaction reaches the commitment (at once if it already has), and first `receivedSignature` when it
asked for `enableReceivedNotification` and the transaction lands while it listens. Slots, roots, bank
updates and votes are told for every slot passed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from solders.account import Account
from solders.pubkey import Pubkey
from websockets.asyncio.server import ServerConnection

from yieldcli.sandbox.chain.clock import commitment_level
from yieldcli.sandbox.chain.history import History
from yieldcli.sandbox.chain.records import TxRecord
from yieldcli.sandbox.rpc.cluster import node_vote
from yieldcli.sandbox.runtime import Runtime

EncodeAccount = Callable[[Account | None, dict[str, Any]], Any]  # (account, config) -> the RPC's account JSON
Note = tuple[ServerConnection, dict[str, Any]]
MAX_SLOTS_TOLD = 64  # slots told at once after a pause (a process that slept, a jump of many slots)
BY_BLOCK = ("account", "program", "logs")  # the subscriptions told block by block at their commitment


@dataclass
class Subscription:
    kind: str  # account, program, logs, signature, slot, root, slotsUpdates, vote
    connection: ServerConnection
    key: str = ""  # the account, program or signature watched; the address logs must mention ("" for all)
    config: dict[str, Any] = field(default_factory=dict)
    test: Callable[[str, bytes], bool] | None = None  # programSubscribe's filters
    level: str = "finalized"  # processed, confirmed or finalized: when it is told
    seen: int = 0  # the last block told of (account, program and logs subscriptions)
    received: bool = False  # told `receivedSignature` already


def told_from(runtime: Runtime, commitment: str | None) -> tuple[str, int]:
    """(level, the last block it has seen) for a new subscription asking for `commitment`: the newest
    block at its level is still to be told. Here a landed transaction's block is confirmed at once,
    where a node's takes a slot: a client that sends, then subscribes, is told of it as on a node."""
    level = commitment_level(commitment)
    return level, max(runtime.commitment_slot("confirmed" if level == "processed" else level) - 1, 0)


class Notifying:
    """Part of `PubSubServer`: the notifications owed since the last look."""

    runtime: Runtime
    _subscriptions: dict[int, Subscription]
    _encode_account: EncodeAccount
    _slot: int  # the current slot at the last look
    _root: int  # the finalized slot at the last look
    _last: str | None  # the newest transaction at the last look

    def _notifications(self) -> list[Note]:
        history = self.runtime.history()
        fresh = _since(history, self._last)
        if history.records:
            self._last = history.records[-1].signature
        out: list[Note] = []
        for number, s in list(self._subscriptions.items()):
            if s.kind == "signature":
                out += self._signature(number, s, history, fresh)
            elif s.kind in BY_BLOCK:
                out += self._by_block(number, s, history)
        if history.slot != self._slot:
            # Every slot passed since the last look is told, as a node tells each (a landing and a
            # slot's end between two looks are two slots), the last MAX_SLOTS_TOLD at most.
            passed = range(max(self._slot + 1, history.slot - MAX_SLOTS_TOLD + 1), history.slot + 1)
            self._slot = history.slot
            for slot in passed:
                out += self._per_slot(history, slot)
        if history.finalized != self._root:
            self._root = history.finalized
            roots = [(n, s) for n, s in list(self._subscriptions.items()) if s.kind == "root"]
            out += [_note(n, s, "root", history.finalized) for n, s in roots]
        return out

    def _by_block(self, number: int, s: Subscription, history: History) -> list[Note]:
        """The blocks from the last one told up to the subscription's level, each told on its own."""
        # The slot being made (processed) holds nothing yet: a landed transaction closes its slot.
        reached = min(history.commitment_slot(s.level), history.confirmed)
        if reached <= s.seen:
            return []
        blocks = _between(history, s.seen, reached)
        s.seen = reached
        out: list[Note] = []
        for record in blocks:
            context = {"slot": record.slot}
            if s.kind == "logs":
                if not s.key or s.key in history.account_keys(record):
                    value = {"signature": record.signature, "err": record.err, "logs": record.logs}
                    out.append(_note(number, s, "logs", {"context": context, "value": value}))
            elif s.kind == "account":
                if s.key in history.written(record):
                    account = self.runtime.account_as_of(Pubkey.from_string(s.key), record.slot)
                    value = self._encode_account(account, s.config)
                    out.append(_note(number, s, "account", {"context": context, "value": value}))
            else:
                out += self._program(number, s, history, record)
        return out

    def _program(self, number: int, s: Subscription, history: History, record: TxRecord) -> list[Note]:
        out = []
        for key in history.written(record):
            account = self.runtime.account_as_of(Pubkey.from_string(key), record.slot)
            if account is None or str(account.owner) != s.key:
                continue
            if s.test is not None and not s.test(s.key, bytes(account.data)):
                continue
            value = {"pubkey": key, "account": self._encode_account(account, s.config)}
            out.append(_note(number, s, "program", {"context": {"slot": record.slot}, "value": value}))
        return out

    def _signature(self, number: int, s: Subscription, history: History, fresh: list[TxRecord]) -> list[Note]:
        out = []
        if s.config.get("enableReceivedNotification") is True and not s.received:
            for record in fresh:
                if record.signature == s.key:  # it came in while the subscription listened
                    s.received = True
                    value = {"context": {"slot": record.slot}, "value": "receivedSignature"}
                    out.append(_note(number, s, "signature", value))
        # Told once the transaction reaches the subscription's commitment (it may have landed before
        # it was subscribed to): confirmed at once, finalized some slots later; then it ends.
        landed = self.runtime.status(s.key)
        if landed is not None and landed.slot <= history.commitment_slot(s.level):
            self._subscriptions.pop(number, None)
            value = {"context": {"slot": landed.slot}, "value": {"err": landed.err}}
            out.append(_note(number, s, "signature", value))
        return out

    def _per_slot(self, history: History, slot: int) -> list[Note]:
        """What a new slot tells: the slot, the root (finalized, a fixed depth behind), the bank
        updates, and the node's own vote on the block just made."""
        made = slot - 1
        root = max(history.finalized - (history.slot - slot), min(history.first_block, history.finalized))
        stamp = history.started_ms
        counts = [r.err is None for r in history.by_slot.get(made, [])]
        updates = [
            {"type": "frozen", "slot": made, "timestamp": stamp, "stats": _bank_stats(counts)},
            {"type": "optimisticConfirmation", "slot": made, "timestamp": stamp},
            {"type": "root", "slot": root, "timestamp": stamp},
            {"type": "createdBank", "slot": slot, "parent": made, "timestamp": stamp},
        ]
        out = []
        for number, s in list(self._subscriptions.items()):
            if s.kind == "slot":
                out.append(_note(number, s, "slot", {"parent": made, "root": root, "slot": slot}))
            elif s.kind == "slotsUpdates":
                out += [_note(number, s, "slotsUpdates", update) for update in updates]
            elif s.kind == "vote":
                out.append(_note(number, s, "vote", node_vote(history, made)))
        return out


def _note(number: int, s: Subscription, kind: str, result: Any) -> Note:
    params = {"result": result, "subscription": number}
    return s.connection, {"jsonrpc": "2.0", "method": f"{kind}Notification", "params": params}


def _since(history: History, last: str | None) -> list[TxRecord]:
    """The records after `last` (all of them if it is gone, none if there was none and none came)."""
    records = history.records
    if last is None:
        return list(records)
    for n in range(len(records) - 1, -1, -1):
        if records[n].signature == last:
            return list(records[n + 1 :])
    return list(records)


def _between(history: History, after: int, upto: int) -> list[TxRecord]:
    """The transactions of blocks after `after` up to `upto`, oldest first (records are in slot order)."""
    found = []
    for record in reversed(history.records):
        if record.slot <= after:
            break
        if record.slot <= upto:
            found.append(record)
    return found[::-1]


def _bank_stats(landed: list[bool]) -> dict[str, int]:
    ok = sum(landed)
    return {
        "numTransactionEntries": len(landed),
        "numSuccessfulTransactions": ok,
        "numFailedTransactions": len(landed) - ok,
        "maxTransactionsPerEntry": 1 if landed else 0,
    }
