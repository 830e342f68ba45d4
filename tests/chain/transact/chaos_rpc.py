"""A chaos RPC: a loopback JSON-RPC proxy in front of the sandbox's RPC that lags, caches, lies, cuts and
stalls, as load-balanced and caching providers do. One fault per write, switched on the fly:

    proxy = ChaosRpc(sandbox.rpc_url)
    proxy.fault = StaleLatestBlockhash(behind=5, blockhash_at=...)

Every `sendTransaction` the proxy forwarded is recorded (`proxy.forwarded`, first signatures in base58), so
a test can check that each one is named in the output or kept in the journal. `yield` speaks HTTP only on
the send path (no WebSocket subscription), so only HTTP is proxied.

A fault may hook three moments of an exchange: `before` (answer a call instead of forwarding it), `after`
(rewrite a forwarded answer) and `deliver` (how the HTTP answer reaches the client: a 5xx, a 429, a reset,
a cut body, a delay). `when(method, step)` runs a test's step (advance the chain, release a held
transaction) when a method is first asked after the send, so a wait is steered without racing it.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from solders.transaction import VersionedTransaction

from yieldcli.addresses import b58decode, b58encode

Call = dict[str, Any]
Answer = dict[str, Any]


def signature_of(call: Call) -> str:
    """The first signature of a sendTransaction call's transaction (base64 or base58 encoded)."""
    wire, config = call["params"][0], (call["params"][1:] or [{}])[0] or {}
    raw = base64.b64decode(wire) if config.get("encoding", "base58") == "base64" else b58decode(wire)
    return str(VersionedTransaction.from_bytes(raw).signatures[0])


def error(call: Call, code: int, message: str, data: Any = None) -> Answer:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": call.get("id"), "error": body}


def result(call: Call, value: Any) -> Answer:
    return {"jsonrpc": "2.0", "id": call.get("id"), "result": value}


class Fault:
    """No fault: every call forwarded, every answer as the node gave it. Subclasses change one thing."""

    def before(self, proxy: ChaosRpc, call: Call) -> Answer | None:
        return None

    def after(self, proxy: ChaosRpc, call: Call, answer: Answer) -> Answer:
        return answer

    def deliver(self, proxy: ChaosRpc, calls: list[Call]) -> tuple[str, float] | None:
        """None: deliver normally; ("status", 503), ("reset", 0), ("cut", 0) or ("delay", seconds)."""
        return None


class Both(Fault):
    """Two faults of one provider at once (a lagging node that also caches)."""

    def __init__(self, *faults: Fault) -> None:
        self.faults = faults

    def before(self, proxy: ChaosRpc, call: Call) -> Answer | None:
        for fault in self.faults:
            answer = fault.before(proxy, call)
            if answer is not None:
                return answer
        return None

    def after(self, proxy: ChaosRpc, call: Call, answer: Answer) -> Answer:
        for fault in self.faults:
            answer = fault.after(proxy, call, answer)
        return answer

    def deliver(self, proxy: ChaosRpc, calls: list[Call]) -> tuple[str, float] | None:
        for fault in self.faults:
            how = fault.deliver(proxy, calls)
            if how is not None:
                return how
        return None


# ---- caching and lagging ------------------------------------------------------------------------------


class StaleLatestBlockhash(Fault):
    """getLatestBlockhash answered from a cache `behind` blocks old: an older real blockhash, its own
    (earlier) lastValidBlockHeight. `blockhash_at(slot)` gives the chain's blockhash of a slot."""

    def __init__(self, behind: int, blockhash_at: Callable[[int], str]) -> None:
        self.behind, self.blockhash_at = behind, blockhash_at

    def after(self, proxy: ChaosRpc, call: Call, answer: Answer) -> Answer:
        value = (answer.get("result") or {}).get("value") if call["method"] == "getLatestBlockhash" else None
        if isinstance(value, dict):
            slot = int(answer["result"]["context"]["slot"]) - self.behind
            answer["result"]["context"]["slot"] = slot
            value["lastValidBlockHeight"] -= self.behind
            value["blockhash"] = self.blockhash_at(slot)
        return answer


class HeightShift(Fault):
    """The block height (getBlockHeight, getEpochInfo's blockHeight) from another node: `by` blocks ahead
    (positive) or behind (negative); with `every_other`, the two nodes answer in turn (a height that goes
    backwards)."""

    def __init__(self, by: int, *, every_other: bool = False, after_send: bool = True) -> None:
        self.by, self.every_other, self.after_send, self.asked = by, every_other, after_send, 0

    def after(self, proxy: ChaosRpc, call: Call, answer: Answer) -> Answer:
        if call["method"] not in ("getBlockHeight", "getEpochInfo") or "result" not in answer:
            return answer
        if self.after_send and not proxy.forwarded:
            return answer
        self.asked += 1
        if not self.every_other or self.asked % 2 == 0:
            if call["method"] == "getEpochInfo":
                answer["result"]["blockHeight"] = int(answer["result"]["blockHeight"]) + self.by
            else:
                answer["result"] = int(answer["result"]) + self.by
        return answer


# ---- sends held, dropped, answered wrongly ------------------------------------------------------------


class HoldSend(Fault):
    """sendTransaction answered with its signature at once, forwarded after `delay` seconds (or on
    `release()`): a node that queues it."""

    def __init__(self, delay: float = 3600.0) -> None:
        self.delay, self.held, self._timers = delay, [], []

    def before(self, proxy: ChaosRpc, call: Call) -> Answer | None:
        if call["method"] != "sendTransaction":
            return None
        self.held.append(call)
        timer = threading.Timer(self.delay, self.release)
        timer.daemon = True
        timer.start()
        self._timers.append(timer)
        self.proxy = proxy
        return result(call, signature_of(call))

    def release(self) -> None:
        held, self.held = self.held, []
        for call in held:
            self.proxy.forward([call])


class DropSend(Fault):
    """sendTransaction answered with its signature and never forwarded."""

    def __init__(self) -> None:
        self.dropped: list[str] = []

    def before(self, proxy: ChaosRpc, call: Call) -> Answer | None:
        if call["method"] != "sendTransaction":
            return None
        self.dropped.append(signature_of(call))
        return result(call, self.dropped[-1])


# As a node answers it: the preflight's simulation result, its `err` the reason.
BLOCKHASH_NOT_FOUND_DATA = {"err": "BlockhashNotFound", "logs": [], "accounts": None, "unitsConsumed": 0}


class ForwardThenBlockhashNotFound(Fault):
    """sendTransaction forwarded (it lands), then answered -32002 BlockhashNotFound (a lagging node)."""

    def after(self, proxy: ChaosRpc, call: Call, answer: Answer) -> Answer:
        if call["method"] != "sendTransaction":
            return answer
        return error(call, -32002, "Transaction simulation failed: Blockhash not found", dict(BLOCKHASH_NOT_FOUND_DATA))


class ForwardThenHttp(Fault):
    """sendTransaction forwarded, then the HTTP answer goes wrong: `how` is ("status", 503),
    ("status", 429), ("reset", 0), ("cut", 0) or ("delay", seconds past the client's timeout)."""

    def __init__(self, how: str, value: float = 0) -> None:
        self.how, self.value = how, value

    def deliver(self, proxy: ChaosRpc, calls: list[Call]) -> tuple[str, float] | None:
        return (self.how, self.value) if any(c["method"] == "sendTransaction" for c in calls) else None


# ---- statuses and transactions that lie ---------------------------------------------------------------

INSTRUCTION_ERROR = {"InstructionError": [0, {"Custom": 1}]}


class StatusesSay(Fault):
    """getSignatureStatuses lies about every signature the proxy knows of: `null` (a landed one unknown),
    `failed` (InstructionError for a success) or `confirmed` (for one never forwarded)."""

    def __init__(self, say: str) -> None:
        self.say = say

    def after(self, proxy: ChaosRpc, call: Call, answer: Answer) -> Answer:
        if call["method"] != "getSignatureStatuses" or not isinstance(answer.get("result"), dict):
            return answer
        values = answer["result"]["value"]
        for i, sig in enumerate(call["params"][0]):
            if sig not in proxy.sent:
                continue
            if self.say == "null":
                values[i] = None
            elif self.say == "failed" and values[i] is not None:
                values[i]["err"], values[i]["status"] = INSTRUCTION_ERROR, {"Err": INSTRUCTION_ERROR}
            elif self.say == "confirmed":
                slot = int(answer["result"]["context"]["slot"])
                values[i] = {
                    "slot": slot,
                    "confirmations": 0,
                    "err": None,
                    "status": {"Ok": None},
                    "confirmationStatus": "confirmed",
                }
        return answer


class TransactionSays(Fault):
    """getTransaction lies: `null` (unknown though landed) or `failed` (meta.err for a success)."""

    def __init__(self, say: str) -> None:
        self.say = say

    def after(self, proxy: ChaosRpc, call: Call, answer: Answer) -> Answer:
        if call["method"] != "getTransaction" or call["params"][0] not in proxy.sent:
            return answer
        if self.say == "null":
            answer["result"] = None
        elif isinstance(answer.get("result"), dict) and isinstance(answer["result"].get("meta"), dict):
            meta = answer["result"]["meta"]
            meta["err"], meta["status"] = INSTRUCTION_ERROR, {"Err": INSTRUCTION_ERROR}
        return answer


class OtherGenesis(Fault):
    """getGenesisHash from another backend: a cluster identity the chain never had."""

    def __init__(self) -> None:
        self.genesis = b58encode(bytes(range(1, 33)))

    def after(self, proxy: ChaosRpc, call: Call, answer: Answer) -> Answer:
        if call["method"] == "getGenesisHash" and "result" in answer:
            answer["result"] = self.genesis
        return answer


class MislabelledBatch(Fault):
    """A batch's answers carry each other's ids (rotated by one)."""

    def batch(self, proxy: ChaosRpc, answers: list[Answer]) -> list[Answer]:
        if len(answers) > 1:
            ids = [a.get("id") for a in answers]
            for answer, other in zip(answers, ids[1:] + ids[:1], strict=True):
                answer["id"] = other
        return answers


class Malformed(Fault):
    """`method`'s result replaced by something of the wrong shape."""

    def __init__(self, method: str, value: Any = "not what was asked", *, after_send: bool = False) -> None:
        self.method, self.value, self.after_send = method, value, after_send

    def after(self, proxy: ChaosRpc, call: Call, answer: Answer) -> Answer:
        if call["method"] == self.method and (proxy.forwarded or not self.after_send):
            answer["result"] = self.value
        return answer


class When(Fault):
    """`step()` runs once, at the `nth` time `method` is asked after a send (before it is answered), on
    top of another fault."""

    def __init__(self, inner: Fault, method: str, step: Callable[[], Any], nth: int = 1) -> None:
        self.inner, self.method, self.step, self.nth, self.asked = inner, method, step, nth, 0

    def before(self, proxy: ChaosRpc, call: Call) -> Answer | None:
        if call["method"] == self.method and proxy.sent:
            self.asked += 1
            if self.asked == self.nth:
                self.step()
        return self.inner.before(proxy, call)

    def after(self, proxy: ChaosRpc, call: Call, answer: Answer) -> Answer:
        return self.inner.after(proxy, call, answer)

    def deliver(self, proxy: ChaosRpc, calls: list[Call]) -> tuple[str, float] | None:
        return self.inner.deliver(proxy, calls)


# ---- the proxy -----------------------------------------------------------------------------------------


class ChaosRpc:
    """The proxy, serving on loopback from a thread of its own. `stop()` ends it."""

    def __init__(self, upstream: str, fault: Fault | None = None) -> None:
        self.upstream = upstream
        self.fault: Fault = fault or Fault()
        self.forwarded: list[str] = []  # every sendTransaction that reached the node
        self.sent: set[str] = set()  # every signature a sendTransaction carried, forwarded or not
        self.methods: list[str] = []
        self.batches = 0  # exchanges that asked several questions at once
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                proxy._exchange(self)

            def log_message(self, *args: object) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.handle_error = lambda request, address: None  # type: ignore[method-assign]  # a reset is the point
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def forward(self, calls: list[Call]) -> list[Answer]:
        """Calls sent to the node in one exchange; their answers in order."""
        for call in calls:
            if call["method"] == "sendTransaction":
                with self._lock:
                    self.forwarded.append(signature_of(call))
        body = json.dumps(calls).encode()
        request = urllib.request.Request(self.upstream, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            answers = json.loads(reply.read())
        by_id = {a.get("id"): a for a in answers}
        return [by_id.get(c.get("id"), error(c, -32603, "no answer")) for c in calls]

    def _exchange(self, handler: BaseHTTPRequestHandler) -> None:
        asked = json.loads(handler.rfile.read(int(handler.headers.get("Content-Length") or 0)))
        calls: list[Call] = asked if isinstance(asked, list) else [asked]
        self.batches += len(calls) > 1
        fault = self.fault
        answers: list[Answer | None] = []
        for call in calls:
            self.methods.append(str(call.get("method")))
            if call.get("method") == "sendTransaction":
                self.sent.add(signature_of(call))
            answers.append(fault.before(self, call))
        onward = [c for c, a in zip(calls, answers, strict=True) if a is None]
        forwarded = iter(self.forward(onward) if onward else [])
        final = [fault.after(self, c, next(forwarded)) if a is None else a for c, a in zip(calls, answers, strict=True)]
        if isinstance(fault, MislabelledBatch) and isinstance(asked, list):
            final = fault.batch(self, final)
        payload = json.dumps(final if isinstance(asked, list) else final[0]).encode()
        how = fault.deliver(self, calls)
        _deliver(handler, payload, how)


def _deliver(handler: BaseHTTPRequestHandler, payload: bytes, how: tuple[str, float] | None) -> None:
    kind, value = how or ("ok", 0)
    if kind == "delay":
        time.sleep(value)
    if kind == "reset":  # RST, no answer at all
        handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        handler.close_connection = True
        handler.connection.close()
        return
    status = int(value) if kind == "status" else 200
    if status != 200:
        payload = json.dumps({"error": "upstream busy"}).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    if status == 429:
        handler.send_header("Retry-After", "1")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    if kind == "cut":  # half the body, then the connection closes
        handler.wfile.write(payload[: len(payload) // 2])
        handler.wfile.flush()
        handler.close_connection = True
        handler.connection.shutdown(socket.SHUT_RDWR)
        return
    handler.wfile.write(payload)
