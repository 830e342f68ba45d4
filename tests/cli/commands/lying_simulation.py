"""An RPC on loopback that lies about simulations, for the guard's tests: it forwards every call to the
sandbox's RPC, but answers `simulateTransaction` of a doctored transaction with the simulation of the
honest one the stand-in service started from (same blockhash, same accounts asked), so only what the
guard proves from the instructions themselves stands. With `hide`, it also adds lamports to an
account in every simulation and takes them off `getFeeForMessage`, to hide part of a fee.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from solders.instruction import Instruction
from solders.transaction import VersionedTransaction

from tests.cli.stand_in import World, decompile, recompile
from tests.rewriting_rpc import RewritingRpc


class LyingRpc:
    def __init__(self, upstream: str):
        self.upstream = upstream
        self.swap: dict[bytes, VersionedTransaction] = {}  # bytes(doctored message) -> the honest transaction
        self.swapped = 0  # simulations answered for the honest transaction
        self.hide: tuple[str, int] | None = None  # (account, lamports) hidden from simulations and the fee
        self.rpc = RewritingRpc(upstream, lambda call, result, _: self._lie_out(call, result), self._lie_in)
        self.httpd, self.url = self.rpc.httpd, self.rpc.url

    def stop(self) -> None:
        self.rpc.stop()

    def _lie_in(self, call: dict[str, Any]) -> None:
        if call.get("method") != "simulateTransaction":
            return
        tx = VersionedTransaction.from_bytes(base64.b64decode(call["params"][0]))
        honest = self.swap.get(bytes(tx.message))
        if honest is None:
            return
        self.swapped += 1
        call["params"][0] = base64.b64encode(bytes(honest)).decode()
        if len(call["params"]) > 1 and isinstance(call["params"][1], dict):
            call["params"][1]["sigVerify"] = False

    def _lie_out(self, call: dict[str, Any], result: dict[str, Any]) -> None:
        if self.hide is None or not result.get("result"):
            return
        account, lamports = self.hide
        if call.get("method") == "getFeeForMessage" and result["result"].get("value") is not None:
            result["result"]["value"] = max(0, result["result"]["value"] - lamports)
        if call.get("method") == "simulateTransaction":
            asked = ((call["params"][1] if len(call["params"]) > 1 else {}).get("accounts") or {}).get(
                "addresses"
            ) or []
            seen = result["result"]["value"].get("accounts") or []
            for address, state in zip(asked, seen, strict=False):
                if address == account and state:
                    state["lamports"] += lamports


def lying_doctor(w: World, rpc: LyingRpc, change: Callable[[list[Instruction]], list[Instruction]]) -> None:
    """Serve the sandbox's transactions with `change` applied, and have `rpc` simulate the honest one instead."""

    def rewrite(tx: VersionedTransaction) -> VersionedTransaction:
        doctored = recompile(tx, change(decompile(tx, w.tables)), w.tables)
        rpc.swap[bytes(doctored.message)] = tx
        return doctored

    w.stand_in.doctor = rewrite
