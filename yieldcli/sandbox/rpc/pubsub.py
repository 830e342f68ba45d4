"""Solana PubSub over WebSocket, on the port after the JSON-RPC's (as solana-test-validator serves it).

Subscriptions: account, program, logs, signature, slot, root, slot updates and votes, and their
unsubscribe calls, with the notification shapes a validator sends, each at the commitment it asked for
(see notifications.py). One watcher reads what landed since it last looked (the
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
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from yieldcli.sandbox.rpc.encoding import ACCOUNT_ENCODINGS, unknown
from yieldcli.sandbox.rpc.notifications import EncodeAccount, Notifying, Subscription, told_from
from yieldcli.sandbox.rpc.params import Invalid, options, param, pubkey
from yieldcli.sandbox.rpc.tokens import matcher
from yieldcli.sandbox.runtime import Runtime, RuntimeRpcError

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


class PubSubServer(Notifying):
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
            subscription.level, subscription.seen = told_from(self.runtime, subscription.config.get("commitment"))
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
