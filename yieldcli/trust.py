"""Destinations the user trusts to receive a plain token transfer on a deposit: a small TOML file.

The intent guard lets value leave the user for someone else only inside the pinned strategy
program's instruction. A deployment whose deposits move the user's tokens by a plain SPL transfer
instead needs the user to say, once, that the receiving account is the strategy's: `yield config
trust add`. Each entry is bound to a cluster (its genesis hash), a strategy id and a mint, so trust
given for one strategy, cluster or token never lets another through. Nothing is trusted implicitly.

    [[trusted]]
    cluster = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"   # genesis hash
    strategy = "43620ba3-354c-456b-aa3c-5bf7fa46a6d4"
    destination = "8xY…"                                   # the token account that receives
    mint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    added = "2026-11-25T13:00:00Z"

The file is private (0600), written under a lock beside it, and refused (exit 3) when others could
change it: whoever can write it decides where deposits may go. No agent tool writes it. It is read
through one descriptor, opened without following a link (a symlink is resolved first, the place it
names judged), and judged on what was opened: a regular file with one name, of the user or root.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yieldcli.addresses import is_pubkey
from yieldcli.config import config_dir
from yieldcli.errors import ConfigError
from yieldcli.files import Unsafe, others_can_change, read_checked, take_file_lock, write_atomically

if TYPE_CHECKING:
    from yieldcli.environment import Environment

TRUST_FILE_NAME = "trusted-destinations.toml"
TRUST_MAX_BYTES = 1 << 20  # thousands of entries; more is not a file we wrote
_FIELDS = ("cluster", "strategy", "destination", "mint")
_HEADER = (
    "# Destinations trusted to receive a plain token transfer on a deposit: `yield config trust add|list|remove`.\n"
)


@dataclass(frozen=True)
class Trusted:
    cluster: str  # the cluster's genesis hash
    strategy: str  # the strategy id
    destination: str  # the token account that receives
    mint: str  # the only token it is trusted for
    added: str = ""  # when (UTC, ISO 8601): for people

    def same_place(self, other: Trusted) -> bool:
        return (self.cluster, self.strategy, self.destination) == (other.cluster, other.strategy, other.destination)

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def default_trust_path(env: Environment) -> Path:
    """Beside the config file's default place, in the config folder (as the MCP policy)."""
    return config_dir(env) / TRUST_FILE_NAME


def load_trusted(path: Path) -> list[Trusted]:
    """Every entry of the file at `path` (none when it does not exist); ConfigError (exit 3) when it
    cannot be trusted or read."""
    try:
        problem = others_can_change(path)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise _error(f"cannot read the trust file {path}: {exc.strerror or type(exc).__name__}") from None
    if problem is not None:
        which, why, where = problem
        what = "trust file" if which == "file" else f"folder {where} of the trust file"
        fix = f" (chmod go-w {where})" if why == "can be written by others" else ""
        raise _error(f"the {what} {path} {why}: refusing to use it{fix}")
    try:
        found = read_checked(path, follow=True, limit=TRUST_MAX_BYTES)
    except Unsafe as exc:
        raise _error(f"the trust file {path} {exc.why}: refusing to use it") from None
    except OSError as exc:
        raise _error(f"cannot read the trust file {path}: {exc.strerror or type(exc).__name__}") from None
    return [] if found is None else parse(found[0], path)


def parse(data: bytes, path: Path) -> list[Trusted]:
    import tomllib

    try:
        body = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).splitlines()[0]
        raise _bad(path, f"not valid TOML: {why}") from None
    if set(body) - {"trusted"}:
        raise _bad(path, f"unknown key(s) {', '.join(sorted(set(body) - {'trusted'}))}; only [[trusted]] entries")
    entries = body.get("trusted", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise _bad(path, "trusted must be a list of [[trusted]] tables")
    return [_entry(e, n, path) for n, e in enumerate(entries, 1)]


def _entry(table: dict[str, Any], number: int, path: Path) -> Trusted:
    unknown = set(table) - {*_FIELDS, "added"}
    missing = [k for k in _FIELDS if k not in table]
    if unknown or missing:
        problem = f"unknown {', '.join(sorted(unknown))}" if unknown else f"no {', '.join(missing)}"
        raise _bad(path, f"entry {number}: {problem}")
    values = {k: table.get(k, "") for k in (*_FIELDS, "added")}
    if not all(isinstance(v, str) for v in values.values()):
        raise _bad(path, f"entry {number}: every value is a string")
    for key in ("cluster", "destination", "mint"):
        if not is_pubkey(values[key]):
            raise _bad(path, f"entry {number}: {key} is not a base58 address or hash")
    if not values["strategy"] or len(values["strategy"]) > 128 or not values["strategy"].isprintable():
        raise _bad(path, f"entry {number}: strategy must be a strategy id")
    return Trusted(**values)


def trusted_for(entries: list[Trusted], cluster: str, strategy: str, mint: str) -> dict[str, str]:
    """The destinations trusted for this cluster, strategy and mint: {token account: mint}."""
    return {e.destination: e.mint for e in entries if (e.cluster, e.strategy, e.mint) == (cluster, strategy, mint)}


def change_trusted(path: Path, change: Callable[[list[Trusted]], list[Trusted] | None]) -> list[Trusted]:
    """Read the file again, `change` its entries (None: nothing to write), write it, all under an
    exclusive lock beside it: concurrent `trust add`s keep every entry. The entries as written."""
    lock = path.with_name(path.name + ".lock")
    try:
        fd = take_file_lock(lock)
    except OSError as exc:
        raise _error(f"cannot open the trust file's lock {lock}: {exc.strerror or type(exc).__name__}") from None
    try:
        entries = load_trusted(path)
        changed = change(list(entries))
        if changed is None:
            return entries
        write_atomically(path, _HEADER + _dump(changed))
        return changed
    finally:
        os.close(fd)


def _dump(entries: list[Trusted]) -> str:
    import tomli_w

    return tomli_w.dumps({"trusted": [e.to_dict() for e in entries]}) if entries else ""


def _bad(path: Path, why: str) -> ConfigError:
    return _error(f"invalid trust file {path}: {why}")


def _error(message: str) -> ConfigError:
    return ConfigError(message, hint=None, kind="config.trust")
