"""Solana JSON-RPC 2.0 over loopback, answering from the sandbox `Runtime`.

Enough of the API for the CLI and solana-py's `AsyncClient`, with the fields solders' parsers need
(`context` on wrapped results, `lastValidBlockHeight`, `rentEpoch`, `status`). Non-standard
`sandbox_*` methods steer the test faults from another process:

    sandbox_setFault      ["slow", {"seconds": 0.5, "methods": ["getSignatureStatuses"]}]
                          ["expire" | "fail" | "pending", {"count": 1}]   ["release"]   ["clear"]
                          (or one object: [{"kind": "slow", "seconds": 0.5}])
    sandbox_getFaults     []
    sandbox_clearFaults   []
    sandbox_releasePending []            -> [{"signature", "landed"}]
    sandbox_advanceSlots  [n]            -> new block height
    sandbox_expireBlockhash []
    sandbox_mintTo        [owner, mint, amount]  -> associated token account
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from solders.account import Account
from solders.transaction import VersionedTransaction

from yieldcli.sandbox.rpc.cluster import ClusterMethods
from yieldcli.sandbox.rpc.encoding import unknown
from yieldcli.sandbox.rpc.history import LedgerMethods
from yieldcli.sandbox.rpc.methods import Methods, SandboxControls
from yieldcli.sandbox.rpc.params import dump, error, param, set_commitment
from yieldcli.sandbox.rpc.pubsub import PubSubServer, bind_pair
from yieldcli.sandbox.rpc.tokens import AccountSearches
from yieldcli.sandbox.runtime import Runtime, RuntimeRpcError, TxRecord

SOLANA_CORE_VERSION = "2.2.0"
FEATURE_SET = 3294202862
MAX_REQUEST_BYTES = 4 * 1024 * 1024
# The commitments a validator takes (the last five are older names it still reads).
COMMITMENTS = ("processed", "confirmed", "finalized", "recent", "single", "singleGossip", "root", "max")


class Served:
    """A loopback HTTP server on a thread of its own: `.start()`, `.url`, `.stop()`, or a context manager."""

    _httpd: ThreadingHTTPServer
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class RpcServer(Served, Methods, LedgerMethods, ClusterMethods, AccountSearches, SandboxControls):
    """`RpcServer(runtime).start()`; `.url`; `.stop()`. Also a context manager."""

    def __init__(
        self,
        runtime: Runtime,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        on_confirmed: Callable[[VersionedTransaction, TxRecord], Any] | None = None,
    ):
        self.runtime = runtime
        if on_confirmed is not None:
            runtime.on_confirmed = on_confirmed
        # PubSub listens on the next port, as solana-test-validator's does: clients find it there.
        self._httpd, pubsub_socket = bind_pair(host, port, lambda p: ThreadingHTTPServer((host, p), _Handler))
        self._httpd.daemon_threads = True
        self._httpd.rpc = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None
        self.pubsub = PubSubServer(runtime, pubsub_socket, self._notified_account)
        self.version = (SOLANA_CORE_VERSION, FEATURE_SET)
        self.address = (str(self._httpd.server_address[0]), int(self._httpd.server_address[1]))
        self._methods: dict[str, Callable[[list[Any]], Any]] = {
            "getLatestBlockhash": self._get_latest_blockhash,
            "getBlockHeight": lambda params: runtime.height_of(self._asked_slot()),
            "getSlot": lambda params: self._asked_slot(),
            "getEpochInfo": self._get_epoch_info,
            "isBlockhashValid": self._is_blockhash_valid,
            "sendTransaction": self._send_transaction,
            "simulateTransaction": self._simulate_transaction,
            "getSignatureStatuses": self._get_signature_statuses,
            "getTransaction": self._get_transaction,
            "getAccountInfo": self._get_account_info,
            "getMultipleAccounts": self._get_multiple_accounts,
            "getBalance": self._get_balance,
            "getTokenAccountBalance": self._get_token_account_balance,
            "getTokenAccountsByOwner": self._get_token_accounts_by_owner,
            "getMinimumBalanceForRentExemption": self._get_minimum_balance,
            "getFeeForMessage": self._get_fee_for_message,
            "requestAirdrop": self._request_airdrop,
            "getHealth": lambda params: "ok",
            "getVersion": lambda params: {"solana-core": SOLANA_CORE_VERSION, "feature-set": FEATURE_SET},
            # The sandbox's own, made once per state folder: never mistaken for devnet or mainnet.
            "getGenesisHash": lambda params: runtime.genesis_hash,
            "getRecentPrioritizationFees": self._get_recent_prioritization_fees,
            "getBlock": self._get_block,
            "getBlocks": self._get_blocks,
            "getBlocksWithLimit": self._get_blocks_with_limit,
            "getBlockTime": self._get_block_time,
            "getBlockCommitment": self._get_block_commitment,
            "getBlockProduction": self._get_block_production,
            "getFirstAvailableBlock": self._get_first_available_block,
            "minimumLedgerSlot": self._get_first_available_block,
            "getTransactionCount": self._get_transaction_count,
            "getSignaturesForAddress": self._get_signatures_for_address,
            "getRecentPerformanceSamples": self._get_recent_performance_samples,
            "getProgramAccounts": self._get_program_accounts,
            "getTokenAccountsByDelegate": self._get_token_accounts_by_delegate,
            "getTokenSupply": self._get_token_supply,
            "getTokenLargestAccounts": self._get_token_largest_accounts,
            "getSupply": self._get_supply,
            "getLargestAccounts": self._get_largest_accounts,
            "getIdentity": self._get_identity,
            "getClusterNodes": self._get_cluster_nodes,
            "getVoteAccounts": self._get_vote_accounts,
            "getEpochSchedule": self._get_epoch_schedule,
            "getLeaderSchedule": self._get_leader_schedule,
            "getSlotLeader": self._get_slot_leader,
            "getSlotLeaders": self._get_slot_leaders,
            "getInflationGovernor": self._get_inflation_governor,
            "getInflationRate": self._get_inflation_rate,
            "getInflationReward": self._get_inflation_reward,
            "getStakeMinimumDelegation": self._get_stake_minimum_delegation,
            "getMaxRetransmitSlot": lambda params: runtime.slot,
            "getMaxShredInsertSlot": lambda params: runtime.slot,
            "getHighestSnapshotSlot": self._no_snapshot,
            "sandbox_setFault": self._set_fault,
            "sandbox_getFaults": lambda params: runtime.faults.to_dict(),
            "sandbox_clearFaults": self._clear_faults,
            "sandbox_releasePending": self._release_pending,
            "sandbox_advanceSlots": lambda params: runtime.advance_slots(int(param(params, 0, 1))),
            "sandbox_expireBlockhash": self._expire_blockhash,
            "sandbox_mintTo": self._mint_to,
        }

    # ---- dispatch

    def handle(self, body: bytes) -> bytes | None:
        """One HTTP body in, one out (None for a batch of notifications only)."""
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return dump(error(None, -32700, "Parse error"))
        if isinstance(request, list):
            if not request:
                return dump(error(None, -32600, "Invalid request"))
            self._delay([r.get("method") for r in request if isinstance(r, dict)])
            answers = [self._answer(r) for r in request]
            return dump(answers)
        if isinstance(request, dict):
            self._delay([request.get("method")])
        return dump(self._answer(request))

    def _delay(self, methods: list[Any]) -> None:
        # Slow answers are served outside the runtime lock: other clients are not held up.
        seconds = max(
            (self.runtime.faults.delay_for(str(m)) for m in methods if not str(m).startswith("sandbox_")), default=0.0
        )
        if seconds > 0:
            time.sleep(seconds)

    def _answer(self, request: Any) -> dict[str, Any]:
        if (
            not isinstance(request, dict)
            or request.get("jsonrpc") != "2.0"
            or not isinstance(request.get("method"), str)
        ):
            return error(request.get("id") if isinstance(request, dict) else None, -32600, "Invalid request")
        rid = request.get("id")
        handler = self._methods.get(request["method"])
        if handler is None:
            return error(rid, -32601, "Method not found")
        params = request.get("params", [])
        if params is None:
            params = []
        if not isinstance(params, list):
            return error(rid, -32602, "Invalid params: expected an array")
        try:
            self._check_config(params)
            result = handler(params)
        except RuntimeRpcError as exc:
            return error(rid, exc.code, exc.message, exc.data)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            return error(rid, -32602, f"Invalid params: {exc}")
        except Exception as exc:  # a sandbox bug still answers, as a JSON-RPC internal error
            return error(rid, -32603, f"Internal error: {type(exc).__name__}: {exc}")
        except BaseException as exc:
            # pyo3's PanicException derives from BaseException; anything else (KeyboardInterrupt...) goes on.
            if type(exc).__name__ != "PanicException":
                raise
            return error(rid, -32603, f"Internal error: {exc}")
        return {"jsonrpc": "2.0", "result": result, "id": rid}

    @property
    def ws_url(self) -> str:
        return self.pubsub.url

    def start(self) -> Self:
        if self._thread is None:
            self.pubsub.start()
            self.runtime.landed_hooks.append(self.pubsub.poke)
        return super().start()

    def stop(self) -> None:
        if self.pubsub.poke in self.runtime.landed_hooks:
            self.runtime.landed_hooks.remove(self.pubsub.poke)
        self.pubsub.stop()
        super().stop()

    def _notified_account(self, account: Account | None, config: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return self._account(account, config, "binary")
        except RuntimeRpcError:  # too long for base58: a notification cannot be refused, so base64
            return self._account(account, {**config, "encoding": "base64"}, "base64")

    def _check_config(self, params: list[Any]) -> None:
        """What every method's configuration object may hold: a known commitment, a reached minContextSlot."""
        set_commitment(None)
        for config in params:
            if not isinstance(config, dict):
                continue
            commitment = config.get("commitment")
            if commitment is not None and commitment not in COMMITMENTS:
                raise unknown(commitment, COMMITMENTS)
            if commitment is not None:
                set_commitment(commitment)
            least = config.get("minContextSlot")
            if least is not None:
                slot = self._asked_slot()
                if type(least) is not int or least < 0:
                    raise RuntimeRpcError(-32602, "Invalid params: minContextSlot must be a slot number")
                if least > slot:
                    raise RuntimeRpcError(-32016, "Minimum context slot has not been reached", {"contextSlot": slot})

    def _no_snapshot(self, params: list[Any]) -> None:
        raise RuntimeRpcError(-32008, "No snapshot")


class _Handler(BaseHTTPRequestHandler):
    # Keep-alive, and no Nagle: without the second each request waits ~40-200 ms on delayed ACKs.
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "yield-sandbox-rpc"

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 < length <= MAX_REQUEST_BYTES:
            self._reply(400 if length <= 0 else 413, dump(error(None, -32600, "Invalid request")))
            return
        body = self.rfile.read(length)
        answer = self.server.rpc.handle(body)  # type: ignore[attr-defined]
        self._reply(200, answer or b"")

    def do_GET(self) -> None:  # noqa: N802
        if self.path.split("?", 1)[0] == "/health":
            self._reply(200, b"ok", "text/plain")
        else:
            self._reply(405, b"use POST with a JSON-RPC body", "text/plain")

    def _reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass
