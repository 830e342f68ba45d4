"""Transactions sent whose fate is not yet known, kept on disk so no deposit is ever sent twice.

Before a send, the signature is written here; it is removed once the transaction is confirmed,
failed or expired. A later send to the same cluster first settles every entry still here, and
refuses while one could still land.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class InFlight:
    signature: str
    cluster: str  # a digest of the RPC URL: the URL itself may carry a provider's key
    last_valid_block_height: int
    action: str
    wallet: str
    sent_at: float


def cluster_id(rpc_url: str) -> str:
    return hashlib.sha256(rpc_url.encode()).hexdigest()[:16]


class Journal:
    def __init__(self, path: Path):
        self.path = path

    def entries(self, rpc_url: str | None = None) -> list[InFlight]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            items = [InFlight(**item) for item in raw]
        except FileNotFoundError:
            return []
        except (ValueError, TypeError, OSError):
            # A damaged journal must not block sending for ever; it is rewritten on the next change.
            return []
        return [e for e in items if rpc_url is None or e.cluster == cluster_id(rpc_url)]

    def add(self, signature: str, rpc_url: str, last_valid_block_height: int, action: str, wallet: str) -> InFlight:
        entry = InFlight(signature, cluster_id(rpc_url), last_valid_block_height, action, wallet, time.time())
        self._write([e for e in self.entries() if e.signature != signature] + [entry])
        return entry

    def remove(self, signature: str) -> None:
        kept = [e for e in self.entries() if e.signature != signature]
        self._write(kept)

    def find(self, signature: str) -> InFlight | None:
        return next((e for e in self.entries() if e.signature == signature), None)

    def _write(self, entries: list[InFlight]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump([asdict(e) for e in entries], handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)
