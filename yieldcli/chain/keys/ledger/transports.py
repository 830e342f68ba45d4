"""Two ways to reach the Solana app: USB HID (a real device) and the TCP APDU port of Speculos.

HID is the Ledger's framing over 64-byte reports (channel 0x0101, tag 0x05, a sequence number, the
APDU's length in the first report), through `hidapi`, imported only when a device is opened. The
Speculos port takes a 4-byte big-endian length then the APDU, and answers with a 4-byte length, the
data, then the 2-byte status word.
"""

from __future__ import annotations

import importlib
import socket
import time
from typing import Any

from yieldcli.chain.keys.ledger import errors

LEDGER_VENDOR_ID = 0x2C97
LEDGER_USAGE_PAGE = 0xFFA0
HID_CHANNEL = 0x0101
HID_TAG_APDU = 0x05
HID_REPORT = 64


class SpeculosTransport:
    """The emulator's APDU port, `host:port` (one connection per exchange: Speculos serves one at a time)."""

    def __init__(self, address: str, connect_timeout: float = 5.0):
        host, _, port = address.rpartition(":")
        if not host or not port.isdecimal():
            raise errors.LedgerError(
                f"invalid Speculos APDU address {address!r}: expected host:port", kind="ledger.address"
            )
        self.host, self.port, self.connect_timeout = host.strip("[]"), int(port), connect_timeout
        self.name = f"Speculos at {self.host}:{self.port}"

    def exchange(self, apdu: bytes, timeout: float) -> tuple[bytes, int]:
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except OSError as exc:
            raise errors.not_found(f"nothing answers at {self.host}:{self.port} ({exc.strerror or exc})") from None
        try:
            sock.settimeout(timeout)
            sock.sendall(len(apdu).to_bytes(4, "big") + apdu)
            length = int.from_bytes(_read_exactly(sock, 4), "big")
            answer = _read_exactly(sock, length + 2)
        except TimeoutError:
            raise errors.timed_out(timeout) from None
        except OSError as exc:
            raise errors.not_found(
                f"the connection to {self.host}:{self.port} failed ({exc.strerror or exc})"
            ) from None
        finally:
            sock.close()
        return answer[:-2], int.from_bytes(answer[-2:], "big")

    def close(self) -> None:
        return None


def _read_exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError(0, "closed before the answer was complete")
        data += chunk
    return data


def hid_frames(apdu: bytes) -> list[bytes]:
    """The 64-byte HID reports carrying one APDU (the first also carries its length)."""
    payload = len(apdu).to_bytes(2, "big") + apdu
    frames: list[bytes] = []
    sequence = 0
    while payload or not frames:
        header = HID_CHANNEL.to_bytes(2, "big") + bytes([HID_TAG_APDU]) + sequence.to_bytes(2, "big")
        room = HID_REPORT - len(header)
        frames.append((header + payload[:room]).ljust(HID_REPORT, b"\0"))
        payload, sequence = payload[room:], sequence + 1
    return frames


def hid_unframe(reports: list[bytes]) -> bytes | None:
    """The answer carried by `reports` so far, or None while more reports are needed."""
    body = b"".join(report[5:] for report in reports)
    if len(body) < 2:
        return None
    length = int.from_bytes(body[:2], "big")
    return body[2 : 2 + length] if len(body) - 2 >= length else None


def _hid() -> Any:
    """hidapi's module (it ships no type information), imported only when a USB device is used."""
    return importlib.import_module("hid")


class HidTransport:
    """A Ledger on USB, through hidapi (the `ledger` extra)."""

    def __init__(self, device: Any, name: str):
        self.device, self.name = device, name

    @staticmethod
    def devices() -> list[dict[str, Any]]:
        try:
            hid = _hid()
        except ImportError:
            raise errors.LedgerError(
                "USB access to a Ledger needs the hidapi package",
                hint="pip install 'yieldcli[ledger]' (or: pip install hidapi)",
                kind="ledger.no_hid",
            ) from None
        found = [
            d
            for d in hid.enumerate(LEDGER_VENDOR_ID, 0)
            if d.get("usage_page") == LEDGER_USAGE_PAGE or d.get("interface_number") == 0
        ]
        return found

    @classmethod
    def open(cls, info: dict[str, Any]) -> HidTransport:
        device = _hid().device()
        try:
            device.open_path(info["path"])
        except OSError as exc:
            raise errors.not_found(
                f"the device at {info['path']!r} cannot be opened ({exc}); on Linux, install Ledger's udev rules"
            ) from None
        device.set_nonblocking(False)
        return cls(device, str(info.get("product_string") or "Ledger"))

    def exchange(self, apdu: bytes, timeout: float) -> tuple[bytes, int]:
        try:
            for frame in hid_frames(apdu):
                self.device.write(b"\0" + frame)  # report id 0, then the report
            reports: list[bytes] = []
            deadline = time.monotonic() + timeout
            answer = None
            while answer is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise errors.timed_out(timeout)
                report = bytes(self.device.read(HID_REPORT, int(min(left, 1.0) * 1000)))
                if report:
                    reports.append(report)
                    answer = hid_unframe(reports)
        except (OSError, ValueError) as exc:
            raise errors.not_found(f"the USB connection failed ({exc})") from None
        if len(answer) < 2:
            raise errors.LedgerError("the Ledger sent an answer without a status word", kind="ledger.status")
        return answer[:-2], int.from_bytes(answer[-2:], "big")

    def close(self) -> None:
        try:
            self.device.close()
        except OSError:
            pass
