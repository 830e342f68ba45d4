"""Solana PubSub over WebSocket, on the port after the JSON-RPC's (as solana-test-validator serves it).

Subscriptions: account, program, logs, signature, slot and root, and their unsubscribe calls, with
the notification shapes a validator sends. One watcher reads what landed since it last looked (the
chain's records, so transactions another process landed on the same state folder count too): woken
at once when this process lands one, and once a slot otherwise, only while anything is subscribed.
A signature that already landed when it is subscribed to is notified at once, so a client that
subscribes after sending never misses its confirmation.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from solders.account import Account
from solders.pubkey import Pubkey
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from yieldcli.sandbox.chain.history import History
from yieldcli.sandbox.chain.records import TxRecord
from yieldcli.sandbox.rpc.cluster import node_vote
from yieldcli.sandbox.rpc.encoding import ACCOUNT_ENCODINGS, unknown
from yieldcli.sandbox.rpc.params import Invalid, options, param, pubkey
from yieldcli.sandbox.rpc.tokens import matcher
from yieldcli.sandbox.runtime import Runtime, RuntimeRpcError

EncodeAccount = Callable[[Account | None, dict[str, Any]], Any]  # (account, config) -> the RPC's account JSON
UNSUBSCRIBE = {
    "accountUnsubscribe": "account",
    "programUnsubscribe": "program",
    "logsUnsubscribe": "logs",
    "signatureUnsubscribe": "signature",
    "slotUnsubscribe": "slot",
    "rootUnsubscribe": "root",
    "slotsUpdatesUnsubscribe": "slotsUpdates",
    "voteUnsubscribe": "vote",
}
# Subscriptions that take no parameters and hear of every new slot.
PER_SLOT = {
    "slotSubscribe": "slot",
    "rootSubscribe": "root",
    "slotsUpdatesSubscribe": "slotsUpdates",
    "voteSubscribe": "vote",
}


MAX_SLOTS_TOLD = 64  # slots told at once after a pause (a process that slept, a jump of many slots)


@dataclass
class Subscription:
    kind: str  # account, program, logs, signature, slot, root
    connection: ServerConnection
    key: str = ""  # the account, program or signature watched; the address logs must mention ("" for all)
    config: dict[str, Any] = field(default_factory=dict)
    test: Callable[[str, bytes], bool] | None = None  # programSubscribe's filters


class PubSubServer:
    """`PubSubServer(runtime, sock, encode_account).start()`; `.url`; `.poke()` when something lands; `.stop()`."""

    def __init__(self, runtime: Runtime, sock: socket.socket, encode_account: EncodeAccount):
        self.runtime = runtime
        self._sock = sock
        self._encode_account = encode_account
        self._subscriptions: dict[int, Subscription] = {}
        self._ids = itertools.count(1)
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self._wake: asyncio.Event | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        history = runtime.history()
        self._slot = history.slot
        self._root = history.finalized
        self._last = history.records[-1].signature if history.records else None

    @property
    def url(self) -> str:
        host, port = self._sock.getsockname()[:2]
        return f"ws://{host}:{port}"

    def start(self) -> PubSubServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._main(),), daemon=True)
            self._thread.start()
            self._ready.wait(10)
        return self

    def stop(self) -> None:
        if self._thread is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
            self._thread.join()
            self._thread = None
        self._sock.close()

    def poke(self) -> None:
        """Look at the chain now (thread-safe): something landed."""
        if self._wake is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._wake.set)
            except RuntimeError:  # the loop closed meanwhile
                pass

    async def _main(self) -> None:
        self._wake, self._stopping = asyncio.Event(), asyncio.Event()
        async with serve(self._connection, sock=self._sock, ping_interval=None, max_size=1 << 20):
            watcher = asyncio.create_task(self._watch())
            self._ready.set()
            await self._stopping.wait()
            watcher.cancel()

    # ---- requests

    async def _connection(self, connection: ServerConnection) -> None:
        try:
            async for message in connection:
                try:
                    request = json.loads(message)
                except ValueError:
                    request = None
                if isinstance(request, list) and request:  # a batch: one answer per request, in one message
                    answer: Any = [self._answer(connection, r) for r in request]
                else:
                    answer = (
                        _error(None, -32700, "Parse error") if request is None else self._answer(connection, request)
                    )
                await connection.send(json.dumps(answer, separators=(",", ":")))
                assert self._wake is not None
                self._wake.set()  # a new subscription: a landed signature is told at once
        except ConnectionClosed:
            pass
        finally:
            for number in [n for n, s in self._subscriptions.items() if s.connection is connection]:
                del self._subscriptions[number]

    def _answer(self, connection: ServerConnection, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return _error(None, -32600, "Invalid request")
        rid, method, params = request.get("id"), request["method"], request.get("params") or []
        if not isinstance(params, list):
            return _error(rid, -32602, "Invalid params: expected an array")
        try:
            if method in UNSUBSCRIBE:
                number = param(params, 0)
                found = self._subscriptions.get(number) if type(number) is int else None
                if found is None or found.kind != UNSUBSCRIBE[method] or found.connection is not connection:
                    raise Invalid("Invalid subscription id.")
                del self._subscriptions[number]
                return {"jsonrpc": "2.0", "result": True, "id": rid}
            subscription = self._subscription(connection, method, params)
        except RuntimeRpcError as exc:
            return _error(rid, exc.code, exc.message)
        number = next(self._ids)
        self._subscriptions[number] = subscription
        return {"jsonrpc": "2.0", "result": number, "id": rid}

    def _subscription(self, connection: ServerConnection, method: str, params: list[Any]) -> Subscription:
        encoding = options(params, 1).get("encoding", "binary")
        if method in ("accountSubscribe", "programSubscribe") and encoding not in ACCOUNT_ENCODINGS:
            raise unknown(encoding, ACCOUNT_ENCODINGS)
        if method == "accountSubscribe":
            return Subscription("account", connection, str(pubkey(param(params, 0))), options(params, 1))
        if method == "programSubscribe":
            config = options(params, 1)
            test = matcher(config.get("filters"))
            return Subscription("program", connection, str(pubkey(param(params, 0))), config, test)
        if method == "logsSubscribe":
            wanted = param(params, 0)
            if wanted in ("all", "allWithVotes"):
                return Subscription("logs", connection, "", options(params, 1))
            mentions = wanted.get("mentions") if isinstance(wanted, dict) else None
            if not isinstance(mentions, list) or len(mentions) != 1:
                raise Invalid("Invalid Request: Only 1 address supported")
            return Subscription("logs", connection, str(pubkey(mentions[0])), options(params, 1))
        if method == "signatureSubscribe":
            signature = param(params, 0)
            if not isinstance(signature, str):
                raise Invalid("Invalid param: Invalid signature")
            return Subscription("signature", connection, signature, options(params, 1))
        if method in PER_SLOT:
            return Subscription(PER_SLOT[method], connection)
        raise RuntimeRpcError(-32601, "Method not found")

    # ---- notifications

    async def _watch(self) -> None:
        assert self._wake is not None
        while True:
            slot_seconds = self.runtime.network.slot_ms / 1000 or 0.25
            try:
                await asyncio.wait_for(self._wake.wait(), slot_seconds if self._subscriptions else None)
            except TimeoutError:
                pass
            self._wake.clear()
            for connection, message in self._notifications():
                try:
                    await connection.send(json.dumps(message, separators=(",", ":")))
                except ConnectionClosed:
                    pass

    def _notifications(self) -> list[tuple[ServerConnection, dict[str, Any]]]:
        history = self.runtime.history()
        fresh = _since(history, self._last)
        if history.records:
            self._last = history.records[-1].signature
        out: list[tuple[ServerConnection, dict[str, Any]]] = []
        touched: dict[str, int] = {}  # account -> slot of the last transaction that could write it
        for record in fresh:
            keys = history.account_keys(record)
            touched.update((k, record.slot) for k in history.written(record))
            for number, s in list(self._subscriptions.items()):
                if s.kind == "logs" and (not s.key or s.key in keys):
                    value = {"signature": record.signature, "err": record.err, "logs": record.logs}
                    out.append(self._note(number, s, "logs", {"context": {"slot": record.slot}, "value": value}))
        for number, s in list(self._subscriptions.items()):
            if s.kind == "signature":
                # Told once the transaction reaches the subscription's commitment (it may have landed
                # before it was subscribed to): confirmed at once, finalized some slots later.
                landed = self.runtime.status(s.key)
                if landed is not None and landed.slot <= history.commitment_slot(s.config.get("commitment")):
                    out.append(self._signature(number, s, landed))
            elif s.kind == "account" and s.key in touched:
                value = self._encode_account(self.runtime.get_account(Pubkey.from_string(s.key)), s.config)
                out.append(self._note(number, s, "account", {"context": {"slot": touched[s.key]}, "value": value}))
            elif s.kind == "program":
                out += self._program(number, s, touched)
        if history.slot != self._slot:
            # Every slot passed since the last look is told, as a node tells each (a landing and a
            # slot's end between two looks are two slots), the last MAX_SLOTS_TOLD at most.
            passed = range(max(self._slot + 1, history.slot - MAX_SLOTS_TOLD + 1), history.slot + 1)
            self._slot = history.slot
            for slot in passed:
                out += self._per_slot(history, slot)
        if history.finalized != self._root:
            self._root = history.finalized
            roots = [(n, s) for n, s in list(self._subscriptions.items()) if s.kind == "root"]
            out += [self._note(n, s, "root", history.finalized) for n, s in roots]
        return out

    def _per_slot(self, history: History, slot: int) -> list[tuple[ServerConnection, dict[str, Any]]]:
        """What a new slot tells: the slot, the root (finalized, a fixed depth behind), the bank
        updates, and the node's own vote on the block just made."""
        made = slot - 1
        root = max(history.finalized - (history.slot - slot), min(history.first_block, history.finalized))
        stamp = history.started_ms
        counts = [r.err is None for r in history.by_slot.get(made, [])]
        updates = [
            {"type": "frozen", "slot": made, "timestamp": stamp, "stats": _bank_stats(counts)},
            {"type": "optimisticConfirmation", "slot": made, "timestamp": stamp},
            {"type": "root", "slot": root, "timestamp": stamp},
            {"type": "createdBank", "slot": slot, "parent": made, "timestamp": stamp},
        ]
        out = []
        for number, s in list(self._subscriptions.items()):
            if s.kind == "slot":
                out.append(self._note(number, s, "slot", {"parent": made, "root": root, "slot": slot}))
            elif s.kind == "slotsUpdates":
                out += [self._note(number, s, "slotsUpdates", update) for update in updates]
            elif s.kind == "vote":
                out.append(self._note(number, s, "vote", node_vote(history, made)))
        return out

    def _signature(self, number: int, s: Subscription, record: TxRecord) -> tuple[ServerConnection, dict[str, Any]]:
        self._subscriptions.pop(number, None)  # a signature is told once, then the subscription ends
        return self._note(number, s, "signature", {"context": {"slot": record.slot}, "value": {"err": record.err}})

    def _program(
        self, number: int, s: Subscription, touched: dict[str, int]
    ) -> list[tuple[ServerConnection, dict[str, Any]]]:
        out = []
        for key, slot in touched.items():
            account = self.runtime.get_account(Pubkey.from_string(key))
            if account is None or str(account.owner) != s.key:
                continue
            if s.test is not None and not s.test(s.key, bytes(account.data)):
                continue
            value = {"pubkey": key, "account": self._encode_account(account, s.config)}
            out.append(self._note(number, s, "program", {"context": {"slot": slot}, "value": value}))
        return out

    @staticmethod
    def _note(number: int, s: Subscription, kind: str, result: Any) -> tuple[ServerConnection, dict[str, Any]]:
        params = {"result": result, "subscription": number}
        return s.connection, {"jsonrpc": "2.0", "method": f"{kind}Notification", "params": params}


def _since(history: History, last: str | None) -> list[TxRecord]:
    """The records after `last` (all of them if it is gone, none if there was none and none came)."""
    records = history.records
    if last is None:
        return list(records)
    for n in range(len(records) - 1, -1, -1):
        if records[n].signature == last:
            return list(records[n + 1 :])
    return list(records)


def _bank_stats(landed: list[bool]) -> dict[str, int]:
    ok = sum(landed)
    return {
        "numTransactionEntries": len(landed),
        "numSuccessfulTransactions": ok,
        "numFailedTransactions": len(landed) - ok,
        "maxTransactionsPerEntry": 1 if landed else 0,
    }


def _error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": rid}


def bind_pair(host: str, port: int, bind_http: Callable[[int], Any]) -> tuple[Any, socket.socket]:
    """Bind the HTTP server (via `bind_http(port)`) and a socket on the next port for PubSub. With
    port 0, try free ports until one's successor is free too; else either being taken is an OSError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for _ in range(1 if port else 50):
        httpd = bind_http(port)
        http_port = int(httpd.server_address[1])
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.bind((host, http_port + 1))
            sock.listen(128)
            return httpd, sock
        except OSError:
            sock.close()
            httpd.server_close()
            if port:
                raise
    raise OSError(f"no two free ports in a row on {host}")
