"""The chaos RPC (chaos_rpc.py) in front of the sandbox's, and the judge that reads the chain directly.

The sandbox's chain runs with slots that pass only when a transaction lands or a test advances them
(`slot_ms=0`) and a short blockhash lifetime, so a deadline is reached by a test's step, not by waiting.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.chain.transact.chaos_rpc import ChaosRpc
from tests.conftest import YIELD, Result

WINDOW = 20  # blocks a blockhash stays valid in these tests
DEPOSIT = ("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")
WITHDRAW = ("withdraw", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")
TIMEOUT = ("--confirm-timeout", "4")


@pytest.fixture
def proxy(sandbox):
    """The chaos RPC in front of the served sandbox's RPC, no fault set yet."""
    chaos = ChaosRpc(sandbox.rpc_url)
    yield chaos
    chaos.stop()


def blockhash_at(sandbox):
    """The sandbox chain's blockhash of a slot (what a cache that old would hand out)."""
    from yieldcli.addresses import b58encode
    from yieldcli.sandbox.chain.clock import blockhash_bytes

    return lambda slot: b58encode(blockhash_bytes(sandbox.runtime.genesis_hash, slot))


def journal_file(home: Path) -> Path:
    return home / ".local" / "share" / "yield" / "in-flight.json"


def kept(home: Path) -> set[str]:
    path = journal_file(home)
    if not path.exists():
        return set()
    return {entry["signature"] for entry in json.loads(path.read_text() or "[]")}


@dataclass
class Judge:
    """The five properties, judged by the chain read directly (the sandbox's runtime, not the proxy)."""

    sandbox: object
    proxy: ChaosRpc
    home: Path
    chain: Callable[..., Result]  # `yield` against the sandbox's own RPC
    outputs: list[Result] = field(default_factory=list)

    def landed(self) -> list[str]:
        runtime = self.sandbox.runtime  # type: ignore[attr-defined]
        return [s for s in dict.fromkeys(self.proxy.forwarded) if runtime.status(s) is not None]

    def succeeded(self) -> list[str]:
        runtime = self.sandbox.runtime  # type: ignore[attr-defined]
        return [s for s in self.landed() if runtime.status(s).err is None]

    def saw(self, result: Result, elapsed: float, bound: float) -> Result:
        self.outputs.append(result)
        assert "Traceback" not in result.stderr, result.stderr
        assert elapsed < bound, f"took {elapsed:.1f} s (bound {bound} s): {result.stderr}"
        if result.code == 0:
            body = json.loads(result.stdout)
            assert body["signature"] in self.succeeded(), f"exit 0 for {body['signature']}, not landed: {result.stdout}"
        return result

    def named_or_kept(self) -> None:
        """Every signature that reached the node is in some output, or still in the journal, where
        `yield tx status SIG` (asked of the chain directly) still knows it."""
        said = " ".join(r.stdout + r.stderr for r in self.outputs)
        journal = kept(self.home)
        for signature in dict.fromkeys(self.proxy.forwarded):
            assert signature in said or signature in journal, f"{signature} forwarded, then lost"
            if signature in journal:
                status = self.chain("tx", "status", signature, "-o", "json")
                assert status.code in (0, 8), status.stderr
                body = status.json()
                assert body["signature"] == signature and body["status"] in ("pending", "confirmed", "finalized")
                if body["status"] == "pending":
                    assert body.get("last_valid_block_height") is not None, body  # the journal's deadline

    def at_most_one(self) -> None:
        assert len(self.succeeded()) <= 1, f"landed twice for one intent: {self.succeeded()}"


@pytest.fixture
def judge(sandbox, proxy, isolated, chain):
    return Judge(sandbox, proxy, isolated, chain)


def error_of(result: Result) -> dict:
    """The JSON error object on stderr's last line."""
    last = result.stderr.strip().splitlines()[-1]
    return json.loads(last)["error"]


@pytest.fixture
def via_proxy(chain, proxy, judge):
    """`yield` pointed at the chaos RPC; each run is judged (traceback, time, exit 0 only when landed)."""

    def _yield(*args: str, bound: float = 30.0, **kwargs) -> Result:
        started = time.monotonic()
        result = chain(*args, env={"YIELD_RPC_URL": proxy.url, **kwargs.pop("env", {})}, **kwargs)
        return judge.saw(result, time.monotonic() - started, bound)

    return _yield


@pytest.fixture
def start_via_proxy(chain_env, proxy):
    """`yield` started as a process of its own against the chaos RPC (to be killed)."""

    def _start(*args: str) -> subprocess.Popen:
        return subprocess.Popen(
            [YIELD, *args],
            env={**chain_env, "YIELD_RPC_URL": proxy.url},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    return _start
