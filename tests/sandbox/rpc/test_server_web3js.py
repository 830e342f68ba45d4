"""@solana/web3.js at its defaults against `yield sandbox`'s node, as a suite written for
solana-test-validator uses it: waits for block 5 and reads the first blocks with no transaction version
named, confirms sends at finalized over PubSub, and finds them in the blocks it reads."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from solders.keypair import Keypair

from tests.library.node import node_with

JS_DIR = Path(__file__).resolve().parents[2] / "js"
SOL = 1_000_000_000


def test_web3js_at_its_defaults_reads_from_genesis_and_confirms_at_finalized(node):
    runner = node_with("@solana/web3.js")
    runtime, server = node
    payer = Keypair()
    runtime.airdrop(payer.pubkey(), 10 * SOL)
    secret = json.dumps(list(bytes(payer)))
    args = [runner, str(JS_DIR / "node_drive.mjs"), server.url, server.ws_url, secret]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=JS_DIR)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["first"] == 0
    assert [(b["slot"], b["height"]) for b in got["early"]] == [(s, s) for s in range(6)]
    assert got["early"][0]["parentSlot"] == 0 and sum(b["transactions"] for b in got["early"]) >= 1
    assert [s["err"] for s in got["sent"]] == [None] * 3 and got["status"] == "finalized"
    assert {s["signature"] for s in got["sent"]} <= set(got["seen"])
    assert got["readSlot"] == got["statusSlot"]  # getTransaction at finalized finds it
