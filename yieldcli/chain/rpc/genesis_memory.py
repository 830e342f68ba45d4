"""The genesis hash of each RPC URL, remembered in the data folder for a day.

A cluster's genesis hash never changes, and an RPC URL on the public internet keeps serving the one
cluster: asking it on every run only adds a question before the send. Remembered for a bounded
time all the same (a provider can repoint a URL), and never for a loopback URL, where a local
validator is reset with a new genesis at the same address. URLs are stored as their SHA-256 (an
RPC URL often carries an API key); a file that cannot be read or written is only a missed memory.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from urllib.parse import urlsplit

from yieldcli.config import data_dir
from yieldcli.environment import Environment
from yieldcli.files import write_atomically
from yieldcli.urls import is_loopback

LIFETIME_SECONDS = 24 * 3600
FILE_NAME = "genesis-hashes.json"
_MAX_ENTRIES = 64


def _path() -> Path:
    return data_dir(Environment()) / FILE_NAME


def _key(url: str) -> str | None:
    if is_loopback(urlsplit(url).hostname):
        return None
    return hashlib.sha256(url.encode()).hexdigest()


def _entries(path: Path) -> dict[str, tuple[str, float]]:
    """The well-formed entries: URL key -> (genesis hash, when remembered)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if path.stat().st_size < 65536 else {}
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    return {
        k: (v[0], float(v[1]))
        for k, v in raw.items()
        if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and type(v[1]) in (int, float)
    }


def recall(url: str, *, now: float | None = None) -> str | None:
    """The genesis hash remembered for `url`, if remembered less than a day ago."""
    key = _key(url)
    if key is None:
        return None
    entry = _entries(_path()).get(key)
    if entry is None:
        return None
    age = (time.time() if now is None else now) - entry[1]
    return entry[0] if 0 <= age < LIFETIME_SECONDS else None


def remember(url: str, genesis_hash: str, *, now: float | None = None) -> None:
    key = _key(url)
    if key is None:
        return

    path = _path()
    stamp = time.time() if now is None else now
    entries = {k: v for k, v in _entries(path).items() if 0 <= stamp - v[1] < LIFETIME_SECONDS}
    entries[key] = (genesis_hash, stamp)
    kept = dict(sorted(entries.items(), key=lambda kv: kv[1][1], reverse=True)[:_MAX_ENTRIES])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(kept, sort_keys=True))
    except OSError:
        pass
