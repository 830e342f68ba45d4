"""Base64 text to a `VersionedTransaction` (legacy wire bytes included), refusing what we cannot review."""

from __future__ import annotations

import base64
import binascii

from solders.message import Message, MessageV0
from solders.transaction import VersionedTransaction

from yieldcli.errors import UsageError

SUPPORTED_VERSIONS = ("legacy", 0)
# Said alike when a transaction is decoded and when some bytes are described.
_VERSIONS_SUPPORTED = "only legacy and v0 transactions can be reviewed and signed"
# The largest serialized transaction the network accepts (IPv6 MTU minus headers).
PACKET_DATA_SIZE = 1232
# Text a user hands us for one transaction: its base64 (1644 characters at most) alone, or inside
# our own JSON output, whose review and simulation logs take tens of kilobytes at worst.
TX_TEXT_MAX_BYTES = 256 * 1024


class UndecodableTransaction(UsageError):
    """Text that is not a serialized Solana transaction we can review."""


def decode_transaction(text: str | bytes) -> VersionedTransaction:
    """Decode base64 text of a serialized legacy or v0 transaction.

    Legacy bytes become a `VersionedTransaction` whose message is a legacy `Message`: one type
    for everything downstream; `encode_transaction` gives back the very same bytes.
    """
    raw = _b64decode(text)
    if not raw:
        raise UndecodableTransaction("the transaction is empty")
    if len(raw) > PACKET_DATA_SIZE:
        raise UndecodableTransaction(
            f"the data ({len(raw)} bytes) is larger than any Solana transaction ({PACKET_DATA_SIZE} bytes at most)"
        )
    try:
        tx = VersionedTransaction.from_bytes(raw)
    except BaseException as exc:  # pyo3 panics are BaseExceptions
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise UndecodableTransaction(_describe_failure(raw)) from None
    version = message_version(tx)
    if version not in SUPPORTED_VERSIONS:
        raise UndecodableTransaction(f"transaction message version {version} is not supported; {_VERSIONS_SUPPORTED}")
    if bytes(tx) != raw:
        raise UndecodableTransaction(
            f"the transaction has {len(raw) - len(bytes(tx))} unexpected trailing bytes; "
            "refusing to review a partly decoded transaction"
        )
    if len(tx.signatures) != tx.message.header.num_required_signatures:
        raise UndecodableTransaction(
            f"the transaction carries {len(tx.signatures)} signature slots but its message requires "
            f"{tx.message.header.num_required_signatures}"
        )
    try:
        tx.sanitize()
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise UndecodableTransaction(f"the transaction is malformed: {exc}") from None
    return tx


def encode_transaction(tx: VersionedTransaction) -> str:
    return base64.b64encode(bytes(tx)).decode("ascii")


def message_version(tx: VersionedTransaction) -> str | int:
    """'legacy', 0, or the number of a newer version."""
    message = tx.message
    if isinstance(message, Message):
        return "legacy"
    if isinstance(message, MessageV0):
        return 0
    version = tx.version()
    return version if isinstance(version, int) else str(version)


def _b64decode(text: str | bytes) -> bytes:
    if isinstance(text, bytes):
        try:
            text = text.decode("ascii")
        except UnicodeDecodeError:
            raise UndecodableTransaction("the transaction is not base64 text") from None
    compact = "".join(text.split())
    if compact.startswith('"') and compact.endswith('"') and len(compact) >= 2:
        # A JSON string literal, as /deposit/tx answers.
        compact = compact[1:-1]
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise UndecodableTransaction(
            "the transaction is not valid base64 text",
            hint="pass the base64 string the service returned, unchanged",
        ) from None


def _describe_failure(raw: bytes) -> str:
    # A compact-u16 signature count, then 64-byte signatures, then the message whose first byte
    # tells legacy (< 0x80) from a versioned message (0x80 | version).
    count, size = _short_vec_len(raw)
    offset = size + 64 * count if count is not None else None
    if offset is not None and offset < len(raw) and raw[offset] & 0x80:
        version = raw[offset] & 0x7F
        if version not in (0,):
            return f"transaction message version {version} is not supported; {_VERSIONS_SUPPORTED}"
    return f"the data ({len(raw)} bytes) is not a serialized Solana transaction"


def _short_vec_len(raw: bytes) -> tuple[int | None, int]:
    value = 0
    for i in range(min(3, len(raw))):
        value |= (raw[i] & 0x7F) << (7 * i)
        if not raw[i] & 0x80:
            return value, i + 1
    return None, 0
