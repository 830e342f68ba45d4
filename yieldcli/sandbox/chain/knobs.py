"""Test knobs of the sandbox chain: faults steered per transaction, and network conditions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from yieldcli.errors import ConfigError
from yieldcli.sandbox.chain.clock import BLOCKHASH_WINDOW, FIRST_SLOT, SLOT_MS

if TYPE_CHECKING:  # records import solders; the knobs are read before any chain starts
    from solders.transaction import VersionedTransaction

    from yieldcli.sandbox.chain.lock import SyncedLock
    from yieldcli.sandbox.chain.records import SendOutcome, TxRecord


@dataclass
class Faults:
    """Counts apply to the next transactions sent through `send_transaction`."""

    delay: float = 0.0  # seconds added to every RPC call
    method_delays: dict[str, float] = field(default_factory=dict)  # per JSON-RPC method, instead of `delay`
    expire: int = 0  # accept, never land, and push the block height past their blockhash's last valid height
    fail: int = 0  # land and fail on chain (compute budget exhausted in the first instruction): fee paid, nothing else
    pending: int = 0  # accept and hold, status unknown, until `release_pending()`

    def delay_for(self, method: str) -> float:
        return self.method_delays.get(method, self.delay)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Network:
    """How the sandbox chain behaves like a busy cluster.

    slot_ms: wall-clock length of a slot (0: slots pass only when transactions land).
    blockhash_window: blocks a blockhash stays valid (150 on mainnet; fewer makes expiry quick in tests).
    drop_sends: the first N sends of each transaction are accepted and silently dropped, as a
      congested leader does; a rebroadcast of the same bytes after them lands.
    min_priority_fee: transactions paying less than this many microlamports per compute unit are
      accepted and never land (they expire); getRecentPrioritizationFees reports at least this.
    start_slot: the slot of a new chain's genesis block (0, as a test validator's; a chain already
      saved keeps its own).
    """

    slot_ms: int = SLOT_MS
    blockhash_window: int = BLOCKHASH_WINDOW
    drop_sends: int = 0
    min_priority_fee: int = 0
    start_slot: int = FIRST_SLOT

    ENV = {
        "slot_ms": "YIELD_SANDBOX_SLOT_MS",
        "blockhash_window": "YIELD_SANDBOX_BLOCKHASH_WINDOW",
        "drop_sends": "YIELD_SANDBOX_DROP_SENDS",
        "min_priority_fee": "YIELD_SANDBOX_MIN_PRIORITY_FEE",
        "start_slot": "YIELD_SANDBOX_START_SLOT",
    }

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **overrides: int | None) -> Network:
        """Values from the environment (YIELD_SANDBOX_*), then `overrides` that are not None."""
        values: dict[str, int] = {}
        for name, var in cls.ENV.items():
            text = environ.get(var, "").strip()
            if text:
                try:
                    values[name] = int(text)
                except ValueError:
                    raise ConfigError(f"{var} must be a whole number, got {text!r}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        network = cls(**values)
        if (
            network.slot_ms < 0
            or network.blockhash_window < 1
            or network.drop_sends < 0
            or network.min_priority_fee < 0
            or network.start_slot < 0
        ):
            raise ConfigError("sandbox network knobs must not be negative, and the blockhash window must be at least 1")
        return network


class FaultControls:
    """The fault side of `Runtime`: held transactions and the knobs tests turn."""

    _lock: SyncedLock
    _held: list[VersionedTransaction]
    faults: Faults

    if TYPE_CHECKING:  # provided by `Runtime`, the class these controls are mixed into
        _records: dict[str, TxRecord]

        def _land(self, tx: VersionedTransaction, *, fail: bool = False, notify: bool = False) -> TxRecord | None: ...

    def release_pending(self) -> list[SendOutcome]:
        """Land the held transactions now (those whose blockhash has expired are dropped)."""
        from yieldcli.sandbox.chain.records import SendOutcome as _outcome

        with self._lock:
            held, self._held = self._held, []
            out = []
            for tx in held:
                record = self._land(tx, notify=True)
                out.append(_outcome(str(tx.signatures[0]), record is not None, record))
            return out

    def drop_pending(self) -> list[str]:
        with self._lock:
            held, self._held = self._held, []
            return [str(tx.signatures[0]) for tx in held]

    @property
    def pending_signatures(self) -> list[str]:
        with self._lock:
            return [str(tx.signatures[0]) for tx in self._held]

    def set_fault(self, kind: str, **params: Any) -> Faults:
        """slow(seconds, methods=None) | expire(count=1) | fail(count=1) | pending(count=1) | release | clear."""
        with self._lock:
            if kind == "slow":
                seconds = float(params.get("seconds", 1.0))
                methods = params.get("methods")
                if methods:
                    for method in methods:
                        self.faults.method_delays[str(method)] = seconds
                else:
                    self.faults.delay = seconds
            elif kind in ("expire", "fail", "pending"):
                count = int(params.get("count", 1))
                if count < 0:
                    raise ValueError("count must be 0 or more")
                setattr(self.faults, kind, count)
            elif kind == "release":
                self.release_pending()
            elif kind in ("clear", "none"):
                self.faults = Faults()
            else:
                raise ValueError(f"unknown fault {kind!r}; use slow, expire, fail, pending, release or clear")
            return self.faults

    def clear_faults(self) -> None:
        self.set_fault("clear")

    def status(self, signature: str) -> TxRecord | None:
        with self._lock:
            return self._records.get(signature)
