"""Transactions sent whose fate is not yet known, kept on disk so no deposit is ever sent twice.

Before a send, the signature is written here; it is removed once the transaction is confirmed,
failed or expired. A later send for the same wallet on the same cluster first settles every entry
still here, and refuses while one could still land.

Entries are keyed by the cluster's identity (its genesis hash), never by how the RPC URL is
spelled. Several processes share the file: every read-modify-write holds an exclusive `flock` on a
lock file beside it, and every write goes to a fresh temporary file that replaces the journal
atomically, so a reader sees the old list or the new one, never half of one. The journal lives in the
data folder, which other programs of the user's (an agent's file tools) may reach: it is read through
one descriptor, opened without following a symlink or waiting on a FIFO and judged on what was opened;
a replacement by rename never writes through a link either. A journal that cannot
be read is an error that names it: treating it as empty would forget transactions that may land.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from yieldcli.errors import ConfigError
from yieldcli.files import Unsafe, read_checked, take_file_lock, write_atomically


@dataclass(frozen=True)
class InFlight:
    signature: str
    cluster: str  # the cluster's genesis hash
    last_valid_block_height: int | None  # None for a durable-nonce transaction: no block-height deadline
    action: str
    wallet: str
    sent_at: float
    # A durable-nonce transaction can land until its nonce account holds another value than this one.
    nonce_account: str | None = None
    nonce_value: str | None = None
    # Sent without waiting (--no-wait): its sender reported it as sent and moved on, so its landing
    # is expected and settles it; one whose sender was killed or timed out must be acknowledged.
    detached: bool = False
    # Its own recent blockhash: whether it is still valid is the chain's word on its deadline (None
    # for a durable nonce, and in records written before it was kept).
    blockhash: str | None = None
    # The RPC URL it was sent through, as its SHA-256 (URLs carry keys): the same URL reporting another
    # cluster while this record is open is a stop, not a new chain (`rpc_key`).
    rpc: str | None = None
    # The slot it was proven to land in, once a settle proved it: a landing is never undone, so no later
    # answer (a node missing that history) can turn the record into "expired".
    landed_slot: int | None = None

    def deadline(self, block_height: int | None = None) -> str:
        """Until when it can land, for the person waiting: `until block height 280,000,150 (about 52 s
        from now)` given the current height; a durable-nonce transaction, until its nonce moves on."""
        if self.last_valid_block_height is None:
            return f"until its durable nonce (account {self.nonce_account}) is used or advanced"
        text = f"until block height {self.last_valid_block_height:,}"
        if block_height is not None and block_height <= self.last_valid_block_height:
            text += f" ({about((self.last_valid_block_height - block_height) * MS_PER_BLOCK)} from now)"
        return text


MS_PER_BLOCK = 400  # a block every slot of 400 ms, skipped slots aside: an estimate, said as "about"


def about(ms: int) -> str:
    """`about 52 s`, `about 3 min`: how long a wait is, roughly."""
    seconds = (ms + 999) // 1000
    return f"about {seconds} s" if seconds < 120 else f"about {(seconds + 59) // 60} min"


_FIELDS = {f.name: f.type for f in fields(InFlight)}
# Journals written before durable nonces lack these; their entries all have a block-height deadline.
_OPTIONAL = {"nonce_account", "nonce_value", "detached", "blockhash", "rpc", "landed_slot"}


class Journal:
    """The journal at `path`, and its `mirror` (a second copy where agents do not reach, the config
    folder's): every change goes to both, a read is their union, so a tool that empties or replaces the
    data folder's copy cannot make a send that may land be forgotten."""

    def __init__(self, path: Path, mirror: Path | None = None) -> None:
        self.path = path
        self.mirror = mirror
        self.lock_path = path.with_name(path.name + ".lock")

    def entries(self, cluster: str | None = None, wallet: str | None = None) -> list[InFlight]:
        with self._locked():
            items = self._read()
        return [
            e for e in items if (cluster is None or e.cluster == cluster) and (wallet is None or e.wallet == wallet)
        ]

    def find(self, signature: str) -> InFlight | None:
        return next((e for e in self.entries() if e.signature == signature), None)

    def add(self, entry: InFlight) -> None:
        self._change(lambda items: [e for e in items if e.signature != entry.signature] + [entry])

    def remove(self, *signatures: str) -> None:
        gone = set(signatures)
        self._change(lambda items: [e for e in items if e.signature not in gone])

    def mark_landed(self, signature: str, slot: int) -> None:
        """Proven landed in `slot`: kept so (until the person is told), whatever an RPC says later."""
        self._change(lambda items: [replace(e, landed_slot=slot) if e.signature == signature else e for e in items])

    def detach(self, signature: str) -> None:
        """Its sender reported it and did not wait: the next send settles it without asking."""
        self._change(lambda items: [replace(e, detached=True) if e.signature == signature else e for e in items])

    def claim(self, entry: InFlight) -> list[InFlight]:
        """Add `entry` unless another entry for its wallet and cluster is there; return those others.

        The check and the write happen under one lock: of several processes sending for one wallet
        at once, exactly one gets an empty list back and may send. An entry with the very same
        signature counts too: another process is sending this exact transaction (the service
        builds identical ones for identical requests within one blockhash).
        """
        others: list[InFlight] = []

        def change(items: list[InFlight]) -> list[InFlight]:
            others.extend(e for e in items if e.cluster == entry.cluster and e.wallet == entry.wallet)
            return items if others else items + [entry]

        self._change(change)
        return others

    # ---- storage

    @contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            fd = take_file_lock(self.lock_path)
        except OSError as exc:
            raise ConfigError(
                f"cannot open the journal lock {self.lock_path}: {exc.strerror or type(exc).__name__}",
                hint="check that the directory is writable",
            ) from None
        try:
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _change(self, change: Callable[[list[InFlight]], list[InFlight]]) -> None:
        with self._locked():
            before = self._read()
            after = change(before)
            if after != before:
                try:
                    self._write(after)
                except OSError as exc:
                    raise ConfigError(
                        f"cannot write the journal of sent transactions {self.path}: "
                        f"{exc.strerror or type(exc).__name__}",
                        hint="free some disk space or make the directory writable",
                    ) from None

    def _read(self) -> list[InFlight]:
        """The entries of the journal and its mirror together: a record either holds is kept (the copy
        with more known of it wins, a proven landing over none)."""
        entries = self._read_one(self.path)
        if self.mirror is None:
            return entries
        known = {e.signature: e for e in entries}
        for entry in self._read_one(self.mirror):
            here = known.get(entry.signature)
            if here is None or (here.landed_slot is None and entry.landed_slot is not None):
                known[entry.signature] = entry
        return list(known.values())

    def _read_one(self, path: Path) -> list[InFlight]:
        """The entries, read through one descriptor opened without following a symlink or waiting on
        a FIFO, and judged on it: a regular file of ours, writable by nobody else, with one name. A
        journal that is anything else is refused with its path, never waited on nor treated as empty."""
        try:
            found = read_checked(path, follow=False)
            if found is None:
                return []
            text = found[0].decode("utf-8")
        except Unsafe as exc:
            raise self._damaged(path, f"it {exc.why}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise self._damaged(path, getattr(exc, "strerror", None) or type(exc).__name__) from None
        try:
            raw = json.loads(text)
            if not isinstance(raw, list):
                raise ValueError("not a list")
            return [_entry(item) for item in raw]
        except (ValueError, TypeError, KeyError) as exc:
            raise self._damaged(path, str(exc) or type(exc).__name__) from None

    def _damaged(self, path: Path, why: str) -> ConfigError:
        return ConfigError(
            f"the journal of sent transactions {path} cannot be read ({why}); "
            "it may list transactions that could still land",
            kind="config.journal.damaged",
        )

    def _write(self, entries: list[InFlight]) -> None:
        text = json.dumps([asdict(e) for e in entries])
        if self.mirror is not None:  # the mirror first: a run killed between the two writes loses nothing
            self.mirror.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomically(self.mirror, text)
        write_atomically(self.path, text)


def new_entry(
    signature: str,
    cluster: str,
    last_valid_block_height: int | None,
    action: str,
    wallet: str,
    nonce_account: str | None = None,
    nonce_value: str | None = None,
    *,
    detached: bool = False,
    blockhash: str | None = None,
    rpc: str | None = None,
) -> InFlight:
    if last_valid_block_height is None and (nonce_account is None or nonce_value is None):
        raise ValueError("a journal entry needs a last valid block height or a durable nonce")
    return InFlight(
        signature,
        cluster,
        last_valid_block_height,
        action,
        wallet,
        time.time(),
        nonce_account,
        nonce_value,
        detached,
        blockhash,
        rpc,
    )


def rpc_key(url: str) -> str:
    """How a record names the RPC URL it was sent through: its SHA-256, never the URL (it may carry a key)."""
    return hashlib.sha256(url.encode()).hexdigest()


def _entry(item: object) -> InFlight:
    if not isinstance(item, dict) or not set(_FIELDS) - _OPTIONAL <= set(item) <= set(_FIELDS):
        raise ValueError("an entry has unexpected fields")
    entry = InFlight(**item)
    nonce = (entry.nonce_account, entry.nonce_value)
    lifetime_ok = (type(entry.last_valid_block_height) is int and nonce == (None, None)) or (
        entry.last_valid_block_height is None and all(isinstance(n, str) for n in nonce)
    )
    if not (
        isinstance(entry.signature, str)
        and isinstance(entry.cluster, str)
        and isinstance(entry.wallet, str)
        and isinstance(entry.action, str)
        and lifetime_ok
        and isinstance(entry.sent_at, (int, float))
        and isinstance(entry.detached, bool)
        and all(v is None or isinstance(v, str) for v in (entry.blockhash, entry.rpc))
        and (entry.landed_slot is None or type(entry.landed_slot) is int)
    ):
        raise ValueError("an entry has a field of the wrong type")
    return entry
