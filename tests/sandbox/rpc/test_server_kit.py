"""@solana/kit and the @solana-program clients against the RPC and PubSub of `yield sandbox serve`, with
flows of their own (tests/js/kit_drive.mjs): an airdrop, a SOL transfer, an SPL token mint made, minted
and transferred, a lookup table made and extended then used by a v0 transaction, a durable nonce, each
confirmed over WebSocket; account, slot and signature subscriptions."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.library.node import node_with

JS_DIR = Path(__file__).resolve().parents[2] / "js"
SOL = 1_000_000_000


def test_kit_flows_confirm_over_websocket_against_the_served_sandbox(sandbox):
    runner = node_with("@solana/kit")
    args = [runner, str(JS_DIR / "kit_drive.mjs"), sandbox.rpc.url, sandbox.rpc.ws_url]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=JS_DIR)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)

    assert int(got["funded"]) == 5 * SOL
    sends = [got[n] for n in ("sol", "mintMade", "minted", "moved")] + [
        got["table"]["made"],
        got["v0"],
        got["nonce"]["made"],
    ]
    assert [s["err"] for s in sends] == [None] * len(sends)
    slots = [s["slot"] for s in sends]
    assert slots == sorted(slots) and len(set(slots)) == len(slots)  # a landed transaction closes its slot
    assert got["sol"]["version"] == "legacy" and int(got["recipientBalance"]) == 1_000_000

    token = got["token"]
    assert token == {"supply": "1000000000", "payer": "999750000", "recipient": "250000", "parsedBalance": "250000"}

    table = got["table"]
    assert table["addresses"] == table["others"]
    v0 = got["v0"]
    assert (
        v0["version"] == 0
        and sorted(v0["loaded"]["writable"]) == sorted(table["others"])
        and v0["loaded"]["readonly"] == []
    )
    assert got["loadedBalances"] == ["2000000", "2000000"]

    nonce = got["nonce"]
    assert nonce["before"] != nonce["after"]  # the durable transaction advanced the nonce
    assert nonce["status"]["err"] is None and nonce["status"]["confirmationStatus"] in ("confirmed", "finalized")
    assert int(got["finalRecipient"]) == 1_000_000 + 3_000_000

    assert got["lateNote"] == {"slot": str(got["sol"]["slot"]), "err": None}
    assert [int(n["lamports"]) for n in got["accountNotes"]][:2] == [1_000_000, 4_000_000]
    assert int(got["accountNotes"][0]["slot"]) == got["sol"]["slot"]
    notes = got["slotNotes"]
    assert len(notes) >= 3 and all(int(n["parent"]) == int(n["slot"]) - 1 for n in notes)
    told = [int(n["slot"]) for n in notes]
    assert told == list(range(told[0], told[-1] + 1))  # every slot, those a landing closed among them
    assert {s["slot"] for s in sends} & set(told)
    assert all(int(n["root"]) < int(n["slot"]) for n in notes)
