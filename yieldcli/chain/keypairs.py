"""Signers from solana-keygen JSON files or standard input. Error messages never contain key bytes."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import NamedTuple, TextIO

from solders.keypair import Keypair
from solders.pubkey import Pubkey

from yieldcli.errors import ConfigError, UsageError

STDIN_SOURCES = ("-", "stdin:")


class LoadedKeypair(NamedTuple):
    keypair: Keypair
    # Set when the file is readable or writable by group or others; the caller shows it on stderr.
    warning: str | None


def load_keypair(source: str, *, stdin: TextIO | None = None) -> LoadedKeypair:
    """Load a signer from a keypair file path, or from `stdin` when `source` is `-` or `stdin:`."""
    if source in STDIN_SOURCES:
        stream = sys.stdin if stdin is None else stdin
        try:
            text = stream.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read a keypair from standard input: {type(exc).__name__}") from None
        if not text.strip():
            raise ConfigError(
                "no keypair on standard input",
                hint="pipe a solana-keygen JSON keypair file, e.g. `yield ... --keypair - < id.json`",
            )
        return LoadedKeypair(parse_keypair_json(text, "standard input"), None)
    if ":" in source.split("/", 1)[0] and not Path(source).exists():
        # solana-keygen also knows prompt:, usb:// and ASK; we only read files and stdin.
        raise UsageError(
            f"unsupported keypair source {source!r}",
            hint="give the path of a solana-keygen JSON file, or `-` to read one from standard input",
        )
    path = Path(source).expanduser()
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ConfigError(
            f"keypair file {path} does not exist",
            hint="create one with `solana-keygen new -o <path>` or pass --keypair <path>",
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read keypair file {path}: {exc.strerror or type(exc).__name__}") from None
    if stat.S_ISDIR(mode):
        raise ConfigError(f"keypair path {path} is a directory, not a keypair file")
    try:
        text = path.read_text(encoding="utf-8")
    except PermissionError:
        raise ConfigError(
            f"cannot read keypair file {path}: permission denied",
            hint=f"check its owner and mode (`ls -l {path}`)",
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(f"keypair file {path} is not a solana-keygen JSON file (not UTF-8 text)") from None
    except OSError as exc:
        raise ConfigError(f"cannot read keypair file {path}: {exc.strerror or type(exc).__name__}") from None
    keypair = parse_keypair_json(text, f"keypair file {path}")
    return LoadedKeypair(keypair, permission_warning(path, mode))


def parse_keypair_json(text: str, where: str) -> Keypair:
    """A solana-keygen keypair: a JSON array of 64 integers 0..255 (secret key then public key)."""
    try:
        value = json.loads(text)
    except ValueError:
        # The decoder's message quotes the document: never show it.
        raise ConfigError(f"{where} is not JSON; expected a solana-keygen keypair (an array of 64 numbers)") from None
    if not isinstance(value, list):
        raise ConfigError(f"{where} holds JSON {type(value).__name__}, not a solana-keygen keypair (an array of 64 numbers)")
    if len(value) != 64:
        raise ConfigError(f"{where} holds {len(value)} numbers; a solana-keygen keypair has exactly 64")
    if not all(type(b) is int and 0 <= b <= 255 for b in value):
        raise ConfigError(f"{where} holds values that are not bytes; every item must be an integer 0..255")
    try:
        keypair = Keypair.from_bytes(bytes(value))
    except BaseException as exc:  # solders can raise pyo3's PanicException, a BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise ConfigError(f"{where} is not a valid keypair: its public half does not match its secret half") from None
    return keypair


def permission_warning(path: Path, mode: int) -> str | None:
    if os.name != "posix" or not mode & 0o077:
        return None
    return (
        f"keypair file {path} is accessible by other users (mode {stat.S_IMODE(mode):04o}); "
        f"restrict it with `chmod 600 {path}`"
    )


def pubkey_of_keypair_file(path: str | os.PathLike[str]) -> Pubkey:
    return load_keypair(os.fspath(path)).keypair.pubkey()
