"""The sandbox's API key, kept with its state so a profile written against it works after a restart."""

from __future__ import annotations

import secrets
from pathlib import Path

from yieldcli.files import write_atomically

KEY_FILE = "api-key"


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
