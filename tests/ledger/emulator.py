"""The real Ledger Solana app in the Speculos emulator, and a person at its buttons (its REST API).

`Device.start(app, workdir)` runs Speculos headless on free loopback ports; `approve()` and
`reject()` walk the screens of a request the way a person would and return every text shown.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parents[2]
# The app built from LedgerHQ/app-solana (see its README there); YIELD_TEST_LEDGER_APP points elsewhere.
DEFAULT_APP = ROOT.parent / "shared" / "ledger" / "app-solana-nanosp.elf"
LAUNCHER = Path(__file__).with_name("speculos_loopback.py")


# Read at import: the per-test isolation clears YIELD_* variables before any fixture runs.
APP = Path(os.environ.get("YIELD_TEST_LEDGER_APP") or DEFAULT_APP)


# In CI (`CI`, or `.ci/run`'s YIELD_TEST_REQUIRE_LEDGER) a missing emulator or app fails the tests instead.
REQUIRED = bool(os.environ.get("CI") or os.environ.get("YIELD_TEST_REQUIRE_LEDGER"))


def app_path() -> Path:
    return APP


def missing() -> str | None:
    """Why the emulator cannot run here, or None."""
    try:
        import speculos  # noqa: F401
    except ImportError:
        return "speculos is not installed (pip install 'speculos==0.27.1', part of the test extras)"
    if not shutil.which("qemu-arm-static"):
        return "qemu-arm-static is not installed (apt-get install qemu-user-static)"
    if not app_path().is_file():
        return f"the Ledger Solana app is missing at {app_path()} (set YIELD_TEST_LEDGER_APP)"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Device:
    def __init__(self, process: subprocess.Popen, apdu_port: int, api_port: int, log: Path):
        self.process, self.apdu_port, self.api_port, self.log = process, apdu_port, api_port, log
        self.api = f"http://127.0.0.1:{api_port}"
        self.http = httpx2.Client(timeout=10)
        self.started_in = 0.0

    @property
    def apdu(self) -> str:
        return f"127.0.0.1:{self.apdu_port}"

    @classmethod
    def start(cls, workdir: Path) -> Device:
        apdu_port, api_port = free_port(), free_port()
        log = workdir / "speculos.log"
        began = time.monotonic()
        process = subprocess.Popen(
            [
                sys.executable,
                str(LAUNCHER),
                "--display",
                "headless",
                "--model",
                "nanosp",
                "--apdu-port",
                str(apdu_port),
                "--api-port",
                str(api_port),
                str(app_path()),
            ],
            cwd=workdir,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        device = cls(process, apdu_port, api_port, log)
        try:
            device._wait_ready(began)
        except Exception:
            device.stop()
            raise
        device.started_in = time.monotonic() - began
        return device

    def _wait_ready(self, began: float) -> None:
        while time.monotonic() - began < 60:
            if self.process.poll() is not None:
                raise RuntimeError(f"speculos exited ({self.process.returncode}): {self.log.read_text()[-2000:]}")
            try:
                if "is ready" in " ".join(self.texts()):
                    with socket.create_connection(("127.0.0.1", self.apdu_port), timeout=1):
                        return
            except (httpx2.HTTPError, OSError):
                pass
            time.sleep(0.1)
        raise RuntimeError("speculos did not start within 60 s")

    def stop(self) -> None:
        self.http.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    # --- the person -------------------------------------------------------------------------------

    def texts(self) -> list[str]:
        """The texts drawn since the last `clear()`, in order."""
        return [e["text"] for e in self.http.get(f"{self.api}/events").json()["events"]]

    def clear(self) -> None:
        self.http.delete(f"{self.api}/events")

    def press(self, button: str) -> list[str]:
        """Press and release `left`, `right` or `both`; the texts of the screen that follows."""
        self.clear()
        self.http.post(f"{self.api}/button/{button}", json={"action": "press-and-release"})
        deadline = time.monotonic() + 5
        shown: list[str] = []
        while time.monotonic() < deadline:
            time.sleep(0.15)
            now = self.texts()
            if now and now == shown:
                return now
            shown = now
        return shown

    def enable_blind_signing(self) -> list[str]:
        """Solana app > Settings > Allow blind sign > Yes, then back home, as a person does it."""
        seen = [self.press("right")]  # Settings
        assert "Settings" in seen[-1], seen
        seen.append(self.press("both"))  # the settings list, on "Allow blind sign"
        assert "Allow blind sign" in seen[-1], seen
        seen.append(self.press("both"))  # No / Yes
        assert "Yes" in seen[-1], seen
        seen.append(self.press("right"))  # on Yes
        seen.append(self.press("both"))  # chosen: back to the list
        for _ in range(3):
            seen.append(self.press("right"))  # down to Back
        seen.append(self.press("both"))
        assert "is ready" in " ".join(seen[-1]), seen
        return [text for screen in seen for text in screen]

    def wait_for_request(self, timeout: float = 60) -> list[str]:
        """The first screen of a request (a signature, an address to confirm) once the app shows it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.texts()
            if shown and "is ready" not in " ".join(shown):
                time.sleep(0.2)
                return self.texts()
            time.sleep(0.1)
        raise AssertionError("the Ledger was never asked anything")

    def answer(self, choice: str, timeout: float = 60) -> list[str]:
        """Walk right through the request's screens to `Approve` or `Reject` and press both buttons there;
        every text shown on the way."""
        seen = list(self.wait_for_request(timeout))
        screen = seen
        for _ in range(40):
            if choice in screen:
                self.press("both")
                return seen
            screen = self.press("right")
            seen += screen
        raise AssertionError(f"no {choice} screen: {seen}")
