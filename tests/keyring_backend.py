"""Keyring backends for tests: headless machines have no OS keyring, and none of the user's is touched.

`StandInKeyring` plays an OS keyring: its entries live in a JSON file in the test's own temporary HOME
(each `yield` run is a process of its own, so they cannot live in memory). `Base64FileKeyring` is the
kind of store `yield` must refuse: secrets merely encoded in a file, as keyrings.alt's file backends keep them.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class _FileStore(KeyringBackend):
    priority = 1  # type: ignore[assignment]
    file_name = ""

    def _path(self) -> Path:
        return Path(os.environ["HOME"]) / self.file_name

    def _load(self) -> dict:
        path = self._path()
        return json.loads(path.read_text()) if path.exists() else {}

    def _save(self, entries: dict) -> None:
        self._path().write_text(json.dumps(entries))

    def get_password(self, service, username):
        value = self._load().get(f"{service}/{username}")
        return None if value is None else self.decode(value)

    def set_password(self, service, username, password):
        self._save({**self._load(), f"{service}/{username}": self.encode(password)})

    def delete_password(self, service, username):
        entries = self._load()
        if entries.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError("no such entry")
        self._save(entries)

    @staticmethod
    def encode(value: str) -> str:
        return value

    @staticmethod
    def decode(value: str) -> str:
        return value


class StandInKeyring(_FileStore):
    file_name = "stand-in-os-keyring.json"


class Base64FileKeyring(_FileStore):
    file_name = "keyring_pass.cfg"

    @staticmethod
    def encode(value: str) -> str:
        return base64.b64encode(value.encode()).decode()

    @staticmethod
    def decode(value: str) -> str:
        return base64.b64decode(value).decode()
