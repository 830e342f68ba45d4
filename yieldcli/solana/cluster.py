"""Solana clusters as the Solana CLI names them: RPC URL monikers, commitment levels."""

from __future__ import annotations

from urllib.parse import urlsplit

from yieldcli.errors import UsageError
from yieldcli.urls import redact_url

MAINNET_URL = "https://api.mainnet-beta.solana.com"
DEVNET_URL = "https://api.devnet.solana.com"
TESTNET_URL = "https://api.testnet.solana.com"
LOCALHOST_URL = "http://127.0.0.1:8899"

MONIKERS = {
    "mainnet-beta": MAINNET_URL,
    "m": MAINNET_URL,
    "devnet": DEVNET_URL,
    "d": DEVNET_URL,
    "testnet": TESTNET_URL,
    "t": TESTNET_URL,
    "localhost": LOCALHOST_URL,
    "l": LOCALHOST_URL,
}

COMMITMENTS = ("processed", "confirmed", "finalized")
DEFAULT_COMMITMENT = "confirmed"  # what a send waits for unless told otherwise
DEFAULT_CONFIRM_TIMEOUT = 60.0  # seconds a send waits for its commitment

# A cluster is known by its genesis hash, whatever URL reaches it.
GENESIS_HASHES = {
    "mainnet-beta": "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
    "devnet": "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG",
    "testnet": "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY",
}
SERVICE_CLUSTER = "mainnet-beta"  # the public service builds every transaction for mainnet-beta


def cluster_named(genesis_hash: str) -> str | None:
    """mainnet-beta, devnet or testnet for their genesis hash; None for any other cluster."""
    return next((name for name, known in GENESIS_HASHES.items() if known == genesis_hash), None)


def resolve_rpc_url(value: str) -> str:
    """A URL, or a Solana CLI moniker (mainnet-beta, devnet, testnet, localhost, or their first letter)."""
    text = value.strip()
    if text in MONIKERS:
        return MONIKERS[text]
    parts = urlsplit(text)
    if parts.scheme in ("http", "https") and parts.hostname:
        return text
    raise UsageError(
        f"invalid RPC URL {redact_url(text) if '://' in text else repr(text)}",
        hint="give an http(s) URL or one of mainnet-beta, devnet, testnet, localhost (or m, d, t, l)",
    )


def cluster_of(rpc_url: str) -> str:
    """mainnet-beta, devnet, testnet, or custom."""
    host = (urlsplit(rpc_url).hostname or "").lower()
    for name in ("devnet", "testnet", "mainnet"):
        if name in host:
            return "mainnet-beta" if name == "mainnet" else name
    return "custom"


def commitment_rank(commitment: str) -> int:
    try:
        return COMMITMENTS.index(commitment)
    except ValueError:
        raise UsageError(f"invalid commitment {commitment!r}; use one of {', '.join(COMMITMENTS)}") from None
