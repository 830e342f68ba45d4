"""The Ledger tests' world: the real Solana app in Speculos, the sandbox, and `yield` pointed at both."""

from __future__ import annotations

import json
import threading
import time
import urllib.request

import pytest

from tests.conftest import TEST_API_KEY
from tests.ledger import emulator
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
# The app's keys under Speculos' default seed (see ../shared/ledger/README.md).
KEY_44_501 = "7NmQKgPPDM6EjZSLbSVRXDd6UvPN7azaXF5YJNUJpqG9"
KEY_0 = "2SjBBhnRiESRWYPqSti1mM2u47aBa6vBg2YHVqcEmTKH"
KEY_0_0 = "EDUded8fGxKkRTWWjE9YFzCmrW54aXXabVKLn3NyvHqV"
LEDGER_URL = "usb://ledger?key=0/0"


@pytest.fixture
def device(tmp_path):
    """Speculos running the Solana app on free loopback ports; skipped (failed under CI) when it cannot run."""
    reason = emulator.missing()
    if reason:
        if emulator.REQUIRED:
            pytest.fail(f"the Ledger tests must run in CI: {reason}")
        pytest.skip(reason)
    workdir = tmp_path / "speculos"
    workdir.mkdir()
    dev = emulator.Device.start(workdir)
    yield dev
    dev.stop()


def rpc_call(url: str, method: str, params: list):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())["result"]


class LedgerWorld:
    """`yield` against the sandbox, signing with the Ledger in Speculos (its key 0/0 holds SOL and USDC)."""

    def __init__(self, sandbox, run, device, api_url: str | None = None):
        self.sandbox, self.run, self.device = sandbox, run, device
        self.api_url = api_url or sandbox.url
        rpc_call(sandbox.rpc_url, "requestAirdrop", [KEY_0_0, 2_000_000_000])
        rpc_call(sandbox.rpc_url, "sandbox_mintTo", [KEY_0_0, USDC, 100_000_000])

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "YIELD_API_URL": self.api_url,
            "YIELD_API_KEY": TEST_API_KEY,
            "YIELD_RPC_URL": self.sandbox.rpc_url,
            "YIELD_STRATEGY": DEMO_STRATEGY_ID,
            "YIELD_KEYPAIR": LEDGER_URL,
            "YIELD_LEDGER_APDU": self.device.apdu,
            **extra,
        }

    def yield_(self, *args: str, env: dict[str, str] | None = None, **kwargs):
        return self.run(*args, env=self.env(**(env or {})), **kwargs)

    def with_person(self, choice: str, *args: str, env: dict[str, str] | None = None):
        """Run `yield` while the person answers `choice` (Approve/Reject) on the device: (result, texts shown, seconds
        from the request on the device to the command's end)."""
        self.device.clear()
        out: dict = {}

        def person():
            try:
                out["texts"] = self.device.answer(choice)
                out["answered"] = time.monotonic()
            except BaseException as exc:  # reported below, with the command's output
                out["error"] = exc

        thread = threading.Thread(target=person, daemon=True)
        thread.start()
        result = self.yield_(*args, env=env, timeout=120)
        ended = time.monotonic()
        thread.join(70)
        if "error" in out:
            raise AssertionError(f"{out['error']}\nstderr: {result.stderr}")
        return result, out.get("texts", []), out, ended

    def usdc_position(self) -> int:
        body = self.yield_("positions", KEY_0_0, "--asset", "USDC", "-o", "json").json()
        return sum(p["total_position_value"] for p in body["data"])


@pytest.fixture
def ledger(sandbox, run, device):
    return LedgerWorld(sandbox, run, device)
