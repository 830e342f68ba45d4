"""A send interrupted after it went out reaches the Python caller as `SentThenInterrupted` with its
signature, never as a bare KeyboardInterrupt: a real SIGINT to a Python process sending through
`Client` against the sandbox served over loopback (its RPC holds the deposit pending), in a plain
script and in a notebook's shape (a loop already running, the send on a thread of its own), and a
cancelled task of `AsyncClient`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from decimal import Decimal

import pytest

from tests.conftest import writing_client
from tests.library.wallet import journal_entries
from yieldcli import SentThenInterrupted

SCRIPT = r"""
import asyncio, json, os, sys
from decimal import Decimal
from yieldcli import Client
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair

client = Client(api_url=os.environ["T_API"], api_key=os.environ["T_KEY"], strategy=DEMO_STRATEGY_ID,
                rpc_url=os.environ["T_RPC"], keypair=demo_keypair(), journal_path=os.environ["T_JOURNAL"])

def send():
    return client.deposit("USDC", Decimal("1"), timeout=20).send(confirm=lambda text, review: True)

async def in_a_notebook():
    return send()  # blocking code run from a running loop, as a notebook cell is

try:
    if sys.argv[1] == "notebook":
        asyncio.new_event_loop().run_until_complete(in_a_notebook())  # no SIGINT handler of asyncio's
    else:
        send()
    print(json.dumps({"raised": None}))
except BaseException as exc:
    print(json.dumps({"raised": type(exc).__name__, "signature": getattr(exc, "signature", None),
                      "kind": getattr(exc, "kind", None)}))
"""


def _held(sandbox, timeout=60.0) -> str:
    deadline = time.monotonic() + timeout
    while not sandbox.runtime.pending_signatures:
        assert time.monotonic() < deadline, "no transaction was sent"
        time.sleep(0.05)
    return next(iter(sandbox.runtime.pending_signatures))


@pytest.mark.parametrize("shape", ["script", "notebook"])
def test_sigint_after_the_send_raises_sent_then_interrupted_with_its_signature(sandbox, journal, shape):
    sandbox.runtime.set_fault("pending", count=1)
    env = {
        **os.environ,
        "T_API": sandbox.url,
        "T_KEY": sandbox.api_key,
        "T_RPC": sandbox.rpc_url,
        "T_JOURNAL": str(journal),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, shape],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    signature = _held(sandbox)
    time.sleep(0.3)  # the wait for it has begun
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - started
    told = json.loads(stdout.strip().splitlines()[-1])
    assert told == {"raised": "SentThenInterrupted", "signature": signature, "kind": "tx.interrupted"}, stderr
    assert took < 5  # at once, not when the wait would have ended
    assert [e.signature for e in journal_entries(journal)] == [signature]  # kept for the next send to settle
    sandbox.runtime.set_fault("clear")
    sandbox.runtime.release_pending()


def test_a_cancelled_async_send_raises_sent_then_interrupted_with_its_signature(sandbox, journal):
    sandbox.runtime.set_fault("pending", count=1)

    async def main():
        async with writing_client(sandbox, journal, asynchronous=True) as client:
            prepared = await client.deposit("USDC", Decimal("1"), timeout=20)
            task = asyncio.create_task(prepared.send(confirm=lambda text, review: True))
            while not sandbox.runtime.pending_signatures:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)
            task.cancel()
            return await task

    with pytest.raises(SentThenInterrupted) as interrupted:
        asyncio.run(main())
    assert interrupted.value.signature == next(iter(sandbox.runtime.pending_signatures))
    sandbox.runtime.set_fault("clear")
    sandbox.runtime.release_pending()
