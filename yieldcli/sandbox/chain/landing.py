"""How a transaction reaches the sandbox chain: what sendTransaction does (preflight, the network's
knobs and the faults asked for), landing it in the current slot with its record, and the prices
recently paid."""

from __future__ import annotations

import base64
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from solders.message import Message
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction
from solders.transaction_metadata import FailedTransactionMetadata

from yieldcli.sandbox.chain.clock import SLOT_HASHES_KEPT
from yieldcli.sandbox.chain.execution import ExecutionHelpers, inner_instructions_json
from yieldcli.sandbox.chain.records import (
    NOT_LANDED,
    RuntimeRpcError,
    SendOutcome,
    TxRecord,
    compute_budget,
    err_json,
    return_data_json,
)
from yieldcli.solana.transaction_errors import describe_error

if TYPE_CHECKING:
    from yieldcli.sandbox.chain.knobs import Faults, Network

log = logging.getLogger("yieldcli.sandbox.runtime")  # the name its messages always had

MAX_RECORDS = 2_000

OnConfirmed = Callable[[VersionedTransaction, TxRecord], Any]


class Landing(ExecutionHelpers):
    """Part of `Runtime` (it runs transactions as `ExecutionHelpers` does, under its knobs, faults and lock)."""

    _records: OrderedDict[str, TxRecord]
    _tracked: set[str]
    _held: list[VersionedTransaction]
    _sends: dict[str, int]
    network: Network
    faults: Faults
    on_confirmed: OnConfirmed | None
    landed_hooks: list[Callable[[], Any]]  # told after any transaction lands (PubSub wakes on it)

    if TYPE_CHECKING:  # provided by `Runtime`, the class this part is mixed into

        def _expire_blockhash_of(self, tx: VersionedTransaction) -> None: ...
        def _advance(self, slots: int = 1) -> None: ...
        def _save(self) -> None: ...
        def _remember_before(self, addresses: list[Pubkey], slot: int | None = None) -> None: ...

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
        """getRecentPrioritizationFees: per recent slot, the least price that landed (at least the minimum
        the sandbox asks)."""
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
        self._remember_before(keys)
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
            return_data=return_data_json(meta),
        )
        self._remember(record)
        self._clock.transactions += 1
        self._sends.pop(signature, None)
        self._advance()
        self._save()
        for hook in self.landed_hooks:
            hook()
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
