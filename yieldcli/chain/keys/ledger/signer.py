"""`LedgerSigner`: a key on a Ledger, usable wherever a solders Keypair signs (`pubkey()`, `sign_message`).

The device is reached per call (Speculos serves one connection at a time; a USB device may be
unplugged between calls). `before_sign` reads the app's configuration first, so that a message the
app can only blind-sign is refused here, with how to turn blind signing on, before it is sent.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from yieldcli.addresses import b58encode
from yieldcli.chain.keys.ledger import errors
from yieldcli.chain.keys.ledger.protocol import AppConfiguration, SolanaApp, Transport
from yieldcli.chain.keys.ledger.urls import SOLANA_PATH, LedgerUrl, parse_ledger_url

if TYPE_CHECKING:
    from solders.pubkey import Pubkey
    from solders.signature import Signature

APDU_ENV = "YIELD_LEDGER_APDU"  # host:port of an emulator's APDU port instead of USB
TIMEOUT_ENV = "YIELD_LEDGER_TIMEOUT"
DEFAULT_TIMEOUT = 120.0  # seconds: a person reads the screen and presses the buttons

# What the Solana app parses and shows (System, Stake, Vote, SPL Token, Token-2022, Associated Token,
# Memo v1 and v2, Compute Budget); an instruction of any other program needs blind signing.
CLEAR_SIGNED_PROGRAMS = frozenset(
    {
        "11111111111111111111111111111111",
        "Stake11111111111111111111111111111111111111",
        "Vote111111111111111111111111111111111111111",
        "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
        "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb",
        "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL",
        "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
        "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
        "ComputeBudget111111111111111111111111111111",
    }
)


def message_hash(message: bytes) -> str:
    """What the app shows as `Message Hash` when it blind-signs: base58 of the message's SHA-256."""
    return b58encode(hashlib.sha256(message).digest())


def needs_blind_signing(message: bytes) -> bool:
    """True when an instruction of `message` belongs to a program the app cannot show."""
    from solders.message import from_bytes_versioned

    parsed = from_bytes_versioned(message)
    keys = parsed.account_keys
    return any(str(keys[ix.program_id_index]) not in CLEAR_SIGNED_PROGRAMS for ix in parsed.instructions)


class LedgerSigner:
    """A key on a Ledger, named by a keypair URL (`usb://ledger?key=0/0`)."""

    def __init__(self, url: str | LedgerUrl, *, apdu: str | None = None, timeout: float | None = None):
        self.url = url if isinstance(url, LedgerUrl) else parse_ledger_url(url)
        # An emulator's APDU port (host:port): the argument, else YIELD_LEDGER_APDU, else USB.
        self.apdu = apdu if apdu is not None else (os.environ.get(APDU_ENV) or None)
        self.timeout = timeout if timeout is not None else _timeout_from_env()
        self._pubkey: Pubkey | None = None

    def __repr__(self) -> str:
        return f"LedgerSigner({str(self.url)!r})"

    @contextlib.contextmanager
    def app(self) -> Iterator[SolanaApp]:
        """The Solana app on the device this URL names, for the length of a `with` block."""
        transport = self._open()
        try:
            yield SolanaApp(transport, self.timeout)
        finally:
            transport.close()

    def device_name(self) -> str:
        """Which device this URL reaches: the emulator's address, or the USB product's name."""
        with self.app() as app:
            return str(getattr(app.transport, "name", "Ledger"))

    def _open(self) -> Transport:
        if self.apdu is not None:
            from yieldcli.chain.keys.ledger.transports import SpeculosTransport

            transport: Transport = SpeculosTransport(self.apdu)
            if self.url.wallet_id is not None and self._wallet_id(transport) != self.url.wallet_id:
                raise errors.not_found(f"the device at {self.apdu} is not wallet {self.url.wallet_id}")
            return transport
        return self._open_usb()

    def _open_usb(self) -> Transport:
        from yieldcli.chain.keys.ledger.transports import HidTransport

        found = HidTransport.devices()
        if not found:
            raise errors.not_found("none is connected over USB")
        if self.url.wallet_id is None and len(found) > 1:
            raise errors.LedgerError(f"{len(found)} Ledgers are connected", kind="ledger.ambiguous")
        for info in found:
            transport = HidTransport.open(info)
            if self.url.wallet_id is None or self._wallet_id(transport) == self.url.wallet_id:
                return transport
            transport.close()
        raise errors.not_found(f"no connected device is wallet {self.url.wallet_id}")

    def _wallet_id(self, transport: Transport) -> str:
        return b58encode(SolanaApp(transport, self.timeout).pubkey(SOLANA_PATH))

    def pubkey(self) -> Pubkey:
        if self._pubkey is None:
            from solders.pubkey import Pubkey

            with self.app() as app:
                self._pubkey = Pubkey.from_bytes(app.pubkey(self.url.levels))
        return self._pubkey

    def confirm_address(self) -> Pubkey:
        """The public key, shown on the device for the person to compare (it waits for their button)."""
        from solders.pubkey import Pubkey

        with self.app() as app:
            shown = Pubkey.from_bytes(app.pubkey(self.url.levels, confirm=True))
        self._pubkey = shown
        return shown

    def configuration(self) -> AppConfiguration:
        with self.app() as app:
            return app.configuration()

    def before_sign(self, message: bytes) -> None:
        """Refuse, before anything is sent to sign, a message the app would refuse: blind signing off."""
        if needs_blind_signing(message) and not self.configuration().blind_signing:
            raise errors.blind_signing_disabled()

    def message_hash(self, message: bytes) -> str:
        return message_hash(message)

    def sign_message(self, message: bytes, /) -> Signature:
        from solders.signature import Signature

        with self.app() as app:
            return Signature.from_bytes(app.sign_message(self.url.levels, bytes(message)))


def _timeout_from_env() -> float:
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise errors.LedgerError(
            f"invalid {TIMEOUT_ENV} {text!r}: expected a positive number of seconds", kind="ledger.setting"
        )
    return value
