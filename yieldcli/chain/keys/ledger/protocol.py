"""The Ledger Solana app's APDU protocol: get the configuration, get a public key, sign a message.

An APDU is CLA INS P1 P2 Lc data. Data longer than 255 bytes goes in chunks: P2 bit 0x02 says more
chunks follow, bit 0x01 that this chunk continues an earlier one (what `@ledgerhq/hw-app-solana`
sends). The answer ends with a two-byte status word; 0x9000 is success.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from yieldcli.chain.keys.ledger import errors
from yieldcli.chain.keys.ledger.urls import HARDENED
from yieldcli.errors import YieldError

CLA = 0xE0
INS_GET_APP_CONFIGURATION = 0x04
INS_GET_PUBKEY = 0x05
INS_SIGN_MESSAGE = 0x06
P1_NON_CONFIRM = 0x00
P1_CONFIRM = 0x01
P2_EXTEND = 0x01  # this chunk continues an earlier one
P2_MORE = 0x02  # more chunks follow
MAX_CHUNK = 255

SW_OK = 0x9000
SW_DECLINED = 0x6985
SW_BLIND_SIGNING_OFF = 0x6808
# The dashboard (no app open) and other apps answer with "class/instruction not supported" or
# "no app open"; a locked device with "security status not satisfied" or its own word.
SW_APP_NOT_OPEN = frozenset({0x6E00, 0x6E01, 0x6D00, 0x6D02, 0x6511, 0x6A15})
SW_LOCKED = frozenset({0x5515, 0x6982, 0x6B0C, 0x530C})
SW_BAD_REQUEST = {
    0x6A80: "the Solana app could not read the message",
    0x6A81: "the Solana app refused the derivation path",
    0x6A82: "the Solana app refused the request (bad signer)",
    0x6A83: "the Solana app refused the request (bad signer count)",
    0x6A84: "the Solana app refused the request (bad length)",
}


class Transport(Protocol):
    """Carries one APDU to the device and brings back its answer: (data, status word)."""

    def exchange(self, apdu: bytes, timeout: float) -> tuple[bytes, int]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class AppConfiguration:
    blind_signing: bool
    pubkey_display: int  # 0: long, 1: short (the app's own setting)
    version: str


def path_bytes(levels: tuple[int, ...]) -> bytes:
    """Number of levels, then each level as 4 bytes big-endian with the hardened bit set."""
    return bytes([len(levels)]) + b"".join((HARDENED | level).to_bytes(4, "big") for level in levels)


def apdus(ins: int, p1: int, payload: bytes) -> list[bytes]:
    """The APDUs carrying `payload`, in chunks of at most 255 bytes."""
    chunks = [payload[i : i + MAX_CHUNK] for i in range(0, len(payload), MAX_CHUNK)] or [b""]
    out = []
    for i, chunk in enumerate(chunks):
        p2 = (P2_EXTEND if i > 0 else 0) | (P2_MORE if i < len(chunks) - 1 else 0)
        out.append(bytes([CLA, ins, p1, p2, len(chunk)]) + chunk)
    return out


def get_configuration_apdus() -> list[bytes]:
    return apdus(INS_GET_APP_CONFIGURATION, 0, b"")


def get_pubkey_apdus(levels: tuple[int, ...], *, confirm: bool = False) -> list[bytes]:
    return apdus(INS_GET_PUBKEY, P1_CONFIRM if confirm else P1_NON_CONFIRM, path_bytes(levels))


def sign_message_apdus(levels: tuple[int, ...], message: bytes) -> list[bytes]:
    # One signer (the number of derivation paths), its path, then the serialized message.
    return apdus(INS_SIGN_MESSAGE, P1_CONFIRM, bytes([1]) + path_bytes(levels) + message)


def check_status(status: int) -> None:
    """Nothing for success; the error the status word stands for otherwise."""
    if status == SW_OK:
        return
    raise error_for(status)


def error_for(status: int) -> YieldError:
    if status == SW_DECLINED:
        return errors.declined()
    if status == SW_BLIND_SIGNING_OFF:
        return errors.blind_signing_disabled()
    if status in SW_APP_NOT_OPEN:
        return errors.app_not_open()
    if status in SW_LOCKED:
        return errors.locked()
    known = SW_BAD_REQUEST.get(status)
    if known is not None:
        return errors.LedgerError(f"{known} (status 0x{status:04x})", kind="ledger.bad_request")
    return errors.LedgerError(f"the Ledger answered with status 0x{status:04x}", kind="ledger.status")


class SolanaApp:
    """The Solana app's commands over one transport. `timeout` bounds each answer (a person may be
    reading the screen: sign and confirm wait for them)."""

    def __init__(self, transport: Transport, timeout: float):
        self.transport = transport
        self.timeout = timeout

    def _send(self, apdus: list[bytes]) -> bytes:
        data = b""
        for apdu in apdus:
            data, status = self.transport.exchange(apdu, self.timeout)
            check_status(status)
        return data

    def configuration(self) -> AppConfiguration:
        data = self._send(get_configuration_apdus())
        if len(data) < 5:
            raise errors.LedgerError(
                f"the Solana app's configuration is {len(data)} bytes, expected 5", kind="ledger.status"
            )
        return AppConfiguration(bool(data[0]), data[1], f"{data[2]}.{data[3]}.{data[4]}")

    def pubkey(self, levels: tuple[int, ...], *, confirm: bool = False) -> bytes:
        data = self._send(get_pubkey_apdus(levels, confirm=confirm))
        if len(data) != 32:
            raise errors.LedgerError(f"the Ledger sent a public key of {len(data)} bytes", kind="ledger.status")
        return data

    def sign_message(self, levels: tuple[int, ...], message: bytes) -> bytes:
        data = self._send(sign_message_apdus(levels, message))
        if len(data) != 64:
            raise errors.LedgerError(f"the Ledger sent a signature of {len(data)} bytes", kind="ledger.status")
        return data
