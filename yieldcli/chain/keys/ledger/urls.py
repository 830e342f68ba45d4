"""Keypair URLs naming a key on a Ledger, read as the Solana CLI reads them.

`usb://ledger` is m/44'/501'; `?key=N` is m/44'/501'/N'; `?key=N/M` is m/44'/501'/N'/M' (Ledger
Live's accounts). `usb://ledger/<WALLET_ID>` picks one device among several: the wallet id is the
device's public key at m/44'/501'. Every level is hardened (ed25519 derives no other kind).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from yieldcli.addresses import is_pubkey
from yieldcli.errors import UsageError

HARDENED = 0x8000_0000
SOLANA_PATH = (44, 501)


def is_ledger_url(source: str) -> bool:
    return source.strip().lower().startswith("usb://ledger")


@dataclass(frozen=True)
class LedgerUrl:
    levels: tuple[int, ...]  # unhardened numbers: (44, 501, N, M)
    wallet_id: str | None = None  # the device's public key at m/44'/501', to pick one device

    @property
    def path(self) -> str:
        return "m/" + "/".join(f"{level}'" for level in self.levels)

    def __str__(self) -> str:
        keys = self.levels[len(SOLANA_PATH) :]
        query = "?key=" + "/".join(str(k) for k in keys) if keys else ""
        return f"usb://ledger{'/' + self.wallet_id if self.wallet_id else ''}{query}"


def parse_ledger_url(source: str) -> LedgerUrl:
    """`usb://ledger[/<WALLET_ID>][?key=N[/M]]`; anything else is refused with what is accepted."""
    text = source.strip()
    parts = urlsplit(text)
    accepted = "use usb://ledger, usb://ledger?key=N or usb://ledger?key=N/M"
    if parts.scheme.lower() != "usb" or parts.netloc.lower() != "ledger" or parts.fragment:
        raise UsageError(f"unsupported keypair URL {text!r}", hint=accepted, kind="usage.ledger_url")
    wallet_id = parts.path.strip("/") or None
    if wallet_id is not None and not is_pubkey(wallet_id):
        raise UsageError(
            f"{wallet_id!r} in {text!r} is not a device's wallet id (a base58 public key)", kind="usage.ledger_url"
        )
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = set(query) - {"key"}
    if unknown or len(query.get("key", [])) > 1:
        raise UsageError(
            f"unsupported keypair URL {text!r}: only one key= is understood", hint=accepted, kind="usage.ledger_url"
        )
    keys = parse_key(query["key"][0]) if "key" in query else ()
    return LedgerUrl(SOLANA_PATH + keys, wallet_id)


def parse_key(text: str) -> tuple[int, ...]:
    """`N` or `N/M` (an optional trailing `'` per level, as written in paths): the levels after 44'/501'."""
    levels = text.strip().split("/")
    numbers = []
    for level in levels:
        digits = level.strip().rstrip("'")
        if not digits.isdecimal() or not digits.isascii() or int(digits) >= HARDENED:
            raise UsageError(
                f"invalid key {text!r}: expected N or N/M, whole numbers below 2^31", kind="usage.ledger_url"
            )
        numbers.append(int(digits))
    if len(numbers) > 2:
        raise UsageError(f"invalid key {text!r}: at most two levels (N/M) after 44'/501'", kind="usage.ledger_url")
    return tuple(numbers)
