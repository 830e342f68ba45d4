"""Signers from solana-keygen JSON files or standard input. Error messages never contain key bytes."""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TextIO

from yieldcli.addresses import b58decode, b58encode, is_base58, is_pubkey
from yieldcli.chain.keys.ledger.urls import is_ledger_url
from yieldcli.errors import ConfigError, UsageError
from yieldcli.files import PIPE_HINT, STDIN_SOURCES, printable, read_small_file, read_small_stream

if TYPE_CHECKING:  # solders is imported only where a Keypair is built: reading a public key needs none
    from solders.keypair import Keypair

    from yieldcli.chain.keys.sign import Signer

# A solana-keygen file is about 230 bytes; pretty-printed, under 1 KB. Anything much larger is not one.
KEYPAIR_MAX_BYTES = 4096


class LoadedKeypair(NamedTuple):
    keypair: Keypair
    # Set when the file is readable or writable by group or others; the caller shows it on stderr.
    warning: str | None


def load_keypair(source: str, *, stdin: TextIO | None = None) -> LoadedKeypair:
    """Load a signer from a keypair file path, or from `stdin` when `source` is `-` or `stdin:`."""
    secret, warning, where = read_keypair_bytes(source, stdin=stdin)
    from solders.keypair import Keypair

    try:
        keypair = Keypair.from_bytes(secret)
    except BaseException as exc:  # solders can raise pyo3's PanicException, a BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise ConfigError(f"{where} is not a valid keypair: its public half does not match its secret half") from None
    return LoadedKeypair(keypair, warning)


def read_keypair_bytes(source: str, *, stdin: TextIO | None = None, origin: str = "") -> tuple[bytes, str | None, str]:
    """The 64 bytes of a solana-keygen keypair, a permission warning or None, and how to name the source.

    Reads a regular file (at most KEYPAIR_MAX_BYTES, never blocking) or standard input; `origin`
    says where the path came from, for messages (" (from config)").
    """
    if source in STDIN_SOURCES:
        stream = sys.stdin if stdin is None else stdin
        text = read_small_stream(stream, limit=KEYPAIR_MAX_BYTES, what="the keypair", error=ConfigError)
        if not text.strip():
            raise ConfigError(
                "no keypair on standard input",
                kind="config.keypair.stdin_empty",
            )
        return parse_keypair_text(text, "standard input"), None, "standard input"
    if ":" in source.split("/", 1)[0] and not _exists(source):
        # solana-keygen also knows prompt:, usb:// and ASK; we only read files and stdin.
        raise UsageError(
            f"unsupported keypair source {source!r}",
            hint="give the path of a solana-keygen JSON file, or `-` to read one from standard input",
        )
    if not source:
        raise UsageError("the keypair path is empty", kind="usage.keypair.empty")
    path = Path(source).expanduser()
    where = printable(f"keypair file {path}{origin}")
    found = read_small_file(
        str(path),
        label=where,
        limit=KEYPAIR_MAX_BYTES,
        error=ConfigError,
        missing_kind="config.keypair.missing",
        pipe_hint=PIPE_HINT,
    )
    try:
        text = found.data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{where} is not a solana-keygen JSON file (not UTF-8 text)") from None
    return parse_keypair_text(text, where), permission_warning(path, found.mode), where


def _exists(source: str) -> bool:
    try:
        return Path(source).exists()
    except (OSError, ValueError):
        return False


def parse_keypair_text(text: str, where: str) -> bytes:
    """A keypair as solana-keygen writes it (a JSON array), or as wallets export it: the 64-byte
    secret key in base58 on one line."""
    stripped = text.strip()
    if is_base58(stripped):  # one word of base58 characters: never JSON
        return parse_keypair_base58(stripped, where)
    return parse_keypair_json(text, where)


def parse_keypair_base58(text: str, where: str) -> bytes:
    """A base58 secret key of 64 bytes (secret then public half). Messages never quote it."""
    secret = b58decode(text)
    if len(secret) != 64:
        raise ConfigError(
            f"{where} holds base58 text of {len(secret)} bytes; a secret key (secret and public half) has 64"
        )
    return secret


def parse_keypair_json(text: str, where: str) -> bytes:
    """A solana-keygen keypair: a JSON array of 64 integers 0..255 (secret key then public key)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: `[[[[...` nested past Python's limit
        # The decoder's message quotes the document: never show it.
        raise ConfigError(
            f"{where} is not JSON; expected a solana-keygen keypair (an array of 64 numbers) "
            "or a base58 secret key on one line"
        ) from None
    if not isinstance(value, list):
        raise ConfigError(
            f"{where} holds JSON {type(value).__name__}, not a solana-keygen keypair (an array of 64 numbers)"
        )
    if len(value) != 64:
        raise ConfigError(f"{where} holds {len(value)} numbers; a solana-keygen keypair has exactly 64")
    if not all(type(b) is int and 0 <= b <= 255 for b in value):
        raise ConfigError(f"{where} holds values that are not bytes; every item must be an integer 0..255")
    return bytes(value)


def permission_warning(path: Path, mode: int) -> str | None:
    if os.name != "posix" or not mode & 0o077:
        return None
    return (
        f"keypair file {path} is accessible by other users (mode {stat.S_IMODE(mode):04o}); "
        f"restrict it with `chmod 600 {path}`"
    )


def public_key_text(source: str, origin: str = "") -> str:
    """The base58 public half of a keypair file (bytes 32..64), without importing solders."""
    secret, _, _ = read_keypair_bytes(source, origin=origin)
    return b58encode(secret[32:])


# --- keypair URLs (a key on a Ledger): one dispatch, before anything reads a file ------------------


class LoadedSigner(NamedTuple):
    signer: Signer
    warning: str | None


def load_signer(source: str, *, stdin: TextIO | None = None) -> LoadedSigner:
    """A Ledger for `usb://ledger…` (the Solana CLI's keypair URLs), else the keypair `load_keypair` reads."""
    if is_ledger_url(source):
        from yieldcli.chain.keys.ledger.signer import LedgerSigner

        return LoadedSigner(LedgerSigner(source), None)
    loaded = load_keypair(source, stdin=stdin)
    return LoadedSigner(loaded.keypair, loaded.warning)


def signer_public_key(source: str, origin: str = "") -> str:
    """The base58 public key a keypair source names: asked of the Ledger for a keypair URL."""
    if is_ledger_url(source):
        from yieldcli.chain.keys.ledger.signer import LedgerSigner

        return str(LedgerSigner(source).pubkey())
    return public_key_text(source, origin)


@dataclass(frozen=True)
class NonceAuthority:
    """A nonce's authority as given: a public key signs later; a keypair file signs now too."""

    pubkey: str
    keypair: Signer | None = None  # a keypair, or a key on a Ledger
    warning: str | None = None  # about the keypair file (its permissions)


def nonce_authority(value: str, *, stdin: TextIO | None = None) -> NonceAuthority:
    """A public key (that is not also a file's name), else a keypair file read as a signer."""
    if is_pubkey(value) and not Path(value).expanduser().exists():
        return NonceAuthority(value)
    loaded = load_signer(value, stdin=stdin)  # a Ledger URL too
    return NonceAuthority(str(loaded.signer.pubkey()), loaded.signer, loaded.warning)
