"""The fee counted from the message, checked against the RPC's getFeeForMessage (issue 35): the sandbox's
RPC answers as the runtime charges (a precompile's signatures counted), and an RPC that says the network
charges more than the count refuses the signature."""

from __future__ import annotations

import base64
import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from solders.hash import Hash
from solders.message import MessageV0, to_bytes_versioned

from tests.cli.stand_in import WALLET, rpc_call
from tests.guard.precompiles import ed25519_verify
from yieldcli.chain.tx.state import network_fee
from yieldcli.solana import programs


def test_the_sandboxs_rpc_counts_a_precompiles_signatures(sandbox):
    recent = rpc_call(sandbox.rpc_url, "getLatestBlockhash", [{"commitment": "confirmed"}])["value"]["blockhash"]
    message = MessageV0.try_compile(WALLET, [programs.memo("n", []), ed25519_verify(12)], [], Hash.from_string(recent))
    encoded = base64.b64encode(to_bytes_versioned(message)).decode()
    said = rpc_call(sandbox.rpc_url, "getFeeForMessage", [encoded, {"commitment": "confirmed"}])["value"]
    assert said == 5_000 * 13 == network_fee(message)


def _proxy(upstream: str, extra: int) -> ThreadingHTTPServer:
    """The sandbox's RPC, its getFeeForMessage answers raised by `extra` lamports."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            request = urllib.request.Request(upstream, body, {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=30) as reply:
                answer = json.loads(reply.read())
            asked = json.loads(body)
            methods = {one.get("id"): one.get("method") for one in (asked if isinstance(asked, list) else [asked])}
            for its in answer if isinstance(answer, list) else [answer]:
                value = (its.get("result") or {}).get("value") if isinstance(its.get("result"), dict) else None
                if methods.get(its.get("id")) == "getFeeForMessage" and isinstance(value, int):
                    its["result"]["value"] = value + extra
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_an_rpc_that_says_the_fee_is_more_than_the_count_refuses_the_signature(sandbox, chain):
    for extra, code in ((0, 0), (1, 10)):
        proxy = _proxy(sandbox.rpc_url, extra)
        try:
            url = f"http://127.0.0.1:{proxy.server_address[1]}"
            signed = chain(
                "deposit", "--asset", "USDC", "--amount", "1", "--sign", "-o", "json", env={"YIELD_RPC_URL": url}
            )
        finally:
            proxy.shutdown()
            proxy.server_close()
        assert signed.code == code, signed.stderr
        if code:
            assert "the RPC says the network charges" in signed.stderr and "more than the" in signed.stderr
