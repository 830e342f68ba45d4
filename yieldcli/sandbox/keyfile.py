"""The sandbox's API key, kept with its state so a profile written against it works after a restart."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from yieldcli.files import write_atomically

KEY_FILE = "api-key"
SERVER_RECORD = "server.json"  # what a running `yield sandbox serve` on the folder wrote about itself


def kept_api_key(folder: Path) -> tuple[str, Path]:
    """(key, file): the key saved in `folder` (owner-only), made and saved on first use."""
    path = folder / KEY_FILE
    try:
        key = path.read_text(encoding="utf-8").strip()
    except OSError:
        key = ""
    if not key:
        key = secrets.token_urlsafe(24)
        write_atomically(path, key + "\n")  # owner-only, as every file of the sandbox's state
    return key, path


def _served_record(folder: Path, api_url: str) -> dict[str, object] | None:
    """What the running `yield sandbox serve` of `folder` wrote about itself, when `api_url` is its service."""
    try:
        record = json.loads((folder / SERVER_RECORD).read_text(encoding="utf-8"))
        os.kill(int(record["pid"]), 0)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(record, dict) or str(record.get("url", "")).rstrip("/") != api_url.rstrip("/"):
        return None
    return record


def served_key_note(folder: Path, api_url: str) -> str | None:
    """When `api_url` is the running `yield sandbox serve` of `folder`: where its API key comes from and
    whether a restart keeps it (None: no such server, or another URL)."""
    record = _served_record(folder, api_url)
    if record is None:
        return None
    if record.get("api_key_source") == "given":
        return "the served sandbox's key, given by its --api-key: give the same one on every restart"
    if record.get("api_key_source") == "kept":
        return f"the served sandbox's key, kept in {folder / KEY_FILE}: the same after a restart"
    return None


def served_rpc_url(folder: Path, api_url: str) -> str | None:
    """The Solana RPC of the running `yield sandbox serve` of `folder` whose service is `api_url` (None: none)."""
    record = _served_record(folder, api_url)
    rpc_url = record.get("rpc_url") if record else None
    return rpc_url if isinstance(rpc_url, str) and rpc_url.startswith("http") else None
