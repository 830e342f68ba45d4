"""The RPC adapter: URL monikers and redaction, explorer links, and every failure turned into our errors."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from solders.pubkey import Pubkey

from yieldcli.chain.rpc.adapter import PreflightFailed, Rpc, RpcError, explorer_url, redact_url
from yieldcli.chain.rpc.read_around import simulation_of
from yieldcli.errors import ConfigError, ExitCode, NetworkError, TransactionExpired, UsageError
from yieldcli.solana.cluster import resolve_rpc_url

SECRET = "sk-9f8e7d6c5b4a"


@pytest.mark.parametrize(
    "value,url",
    [
        ("mainnet-beta", "https://api.mainnet-beta.solana.com"),
        ("m", "https://api.mainnet-beta.solana.com"),
        ("devnet", "https://api.devnet.solana.com"),
        ("d", "https://api.devnet.solana.com"),
        ("testnet", "https://api.testnet.solana.com"),
        ("t", "https://api.testnet.solana.com"),
        ("localhost", "http://127.0.0.1:8899"),
        ("l", "http://127.0.0.1:8899"),
        ("https://rpc.example.com/?api-key=x", "https://rpc.example.com/?api-key=x"),
        ("http://127.0.0.1:9000", "http://127.0.0.1:9000"),
    ],
)
def test_monikers_and_urls(value, url):
    assert resolve_rpc_url(value) == url


@pytest.mark.parametrize("value", ["mainnet", "x", "ftp://host", "127.0.0.1:8899", "https://"])
def test_other_values_are_usage_errors(value):
    with pytest.raises(UsageError, match="invalid RPC URL") as info:
        resolve_rpc_url(value)
    assert "mainnet-beta" in info.value.hint


def test_invalid_url_message_hides_secrets():
    with pytest.raises(UsageError) as info:
        resolve_rpc_url(f"ftp://user:{SECRET}@host/{SECRET}?k={SECRET}")
    assert SECRET not in info.value.message


def test_redact_url():
    assert (
        redact_url(f"https://user:{SECRET}@rpc.example.com:8443/v1/{SECRET}?api-key={SECRET}#x")
        == "https://rpc.example.com:8443/…"
    )
    assert redact_url("http://127.0.0.1:8899") == "http://127.0.0.1:8899"
    assert redact_url("http://127.0.0.1:8899/") == "http://127.0.0.1:8899"


def test_explorer_url():
    sig = "3" * 88
    assert explorer_url(sig, "https://api.mainnet-beta.solana.com") == f"https://explorer.solana.com/tx/{sig}"
    assert explorer_url(sig, "https://api.devnet.solana.com").endswith("?cluster=devnet")
    assert explorer_url(sig, "https://api.testnet.solana.com").endswith("?cluster=testnet")
    # A local cluster has no link: a public explorer cannot reach it (and the sandbox's port is soon gone).
    assert explorer_url(sig, "http://127.0.0.1:8899") is None
    assert explorer_url(sig, "http://localhost:46357") is None
    assert explorer_url(sig, "http://[::1]:8899") is None
    keyed = explorer_url(sig, f"https://rpc.example.com/{SECRET}?api-key={SECRET}")
    assert keyed is not None and SECRET not in keyed and "cluster=custom" in keyed


class Stub:
    """A tiny HTTP server answering every POST with `reply` = (status, body, delay)."""

    def __init__(self):
        stub = self
        self.reply = (200, b"{}", 0.0)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                rid = json.loads(body)["id"]
                status, answer, delay = stub.reply
                time.sleep(delay)
                answer = answer.replace(b'"ID"', json.dumps(rid).encode())
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{port}/{SECRET}?api-key={SECRET}"

    def error(self, code, message, data=None):
        error = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.reply = (200, json.dumps({"jsonrpc": "2.0", "error": error, "id": "ID"}).encode(), 0.0)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.close()


def call(url, method="balance", *args, timeout=5.0):
    async def main():
        async with Rpc(url, timeout=timeout) as rpc:
            fn = getattr(rpc, method)
            return await fn(*args) if args else await fn(Pubkey.new_unique()) if method == "balance" else await fn()

    return asyncio.run(main())


def failure(url, *args, **kwargs):
    with pytest.raises(Exception) as info:
        call(url, *args, **kwargs)
    assert SECRET not in str(info.value) and SECRET not in (getattr(info.value, "hint", "") or "")
    # No chained exception may carry the URL either (tracebacks under --debug).
    assert info.value.__cause__ is None and info.value.__suppress_context__
    return info.value


def test_connection_refused():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    err = failure(f"http://127.0.0.1:{port}/{SECRET}?api-key={SECRET}")
    assert isinstance(err, NetworkError) and err.exit_code == ExitCode.NETWORK
    assert f"http://127.0.0.1:{port}/…" in err.message


def test_timeout(stub):
    stub.reply = (200, b'{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":5},"id":"ID"}', 1.0)
    err = failure(stub.url, timeout=0.2)
    assert isinstance(err, NetworkError) and "did not answer getBalance within 0.2 s" in err.message


def test_success_through_the_stub(stub):
    stub.reply = (200, b'{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":5},"id":"ID"}', 0.0)
    assert call(stub.url) == 5


def test_a_node_that_leaves_accounts_out_is_an_error_not_absent_accounts(stub):
    # Two asked, one answered: zipping would have read the second as "does not exist".
    stub.reply = (200, b'{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":[null]},"id":"ID"}', 0.0)
    with pytest.raises(RpcError, match="with 1 accounts for 2 asked") as info:
        call(stub.url, "multiple_accounts", [Pubkey.new_unique(), Pubkey.new_unique()])
    assert SECRET not in str(info.value)


def test_a_simulation_that_leaves_accounts_out_is_an_error_not_a_shorter_comparison():
    # Two accounts asked after the simulation, one answered: zipping would have left the second out of
    # what the intent check compares.
    asked = [Pubkey.new_unique(), Pubkey.new_unique()]
    with pytest.raises(RpcError, match="simulateTransaction with 1 accounts for 2 asked"):
        simulation_of({"err": None, "logs": [], "accounts": [None]}, asked, [None, None])
    assert simulation_of({"err": None, "logs": [], "accounts": [None, None]}, asked, [None, None]).accounts == (
        None,
        None,
    )


@pytest.mark.parametrize(
    "status,kind,text",
    [
        (429, NetworkError, "rate limiting"),
        (503, NetworkError, "HTTP 503"),
        (403, ConfigError, "refused getBalance (HTTP 403)"),
        (404, RpcError, "HTTP 404"),
    ],
)
def test_http_status(stub, status, kind, text):
    stub.reply = (status, b"nope", 0.0)
    err = failure(stub.url)
    assert isinstance(err, kind) and text in err.message


def test_not_json_rpc(stub):
    stub.reply = (200, b"<html>gateway</html>", 0.0)
    err = failure(stub.url)
    assert isinstance(err, RpcError) and "not a JSON-RPC response" in err.message


def test_unknown_error_code_keeps_its_message(stub):
    # solana-py's typed methods return a bare int for this one.
    stub.error(-32000, "Too many requests for a specific RPC call")
    err = failure(stub.url)
    assert isinstance(err, RpcError) and err.code == -32000
    assert "error -32000: Too many requests" in err.message and err.exit_code == ExitCode.NETWORK
    assert err.kind == "network.rpc"  # the RPC's error, never the service's


@pytest.mark.parametrize("code", [-32002, -32005, -32016])
def test_errors_that_make_solders_panic(stub, code):
    # Without `data` these make solders' typed parsers raise pyo3's PanicException.
    stub.error(code, "Node is behind")
    err = failure(stub.url)
    assert isinstance(err, (RpcError, NetworkError))


def test_preflight_failure_on_send(stub):
    from solders.hash import Hash
    from solders.keypair import Keypair
    from solders.message import MessageV0
    from solders.transaction import VersionedTransaction

    kp = Keypair()
    tx = VersionedTransaction(MessageV0.try_compile(kp.pubkey(), [], [], Hash.new_unique()), [kp])
    logs = ["Program log: insufficient funds"]
    stub.error(
        -32002,
        "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1",
        {"err": {"InstructionError": [0, {"Custom": 1}]}, "logs": logs, "accounts": None, "unitsConsumed": 10},
    )
    err = failure(stub.url, "send", tx)
    assert isinstance(err, PreflightFailed) and err.exit_code == ExitCode.TX_FAILED
    assert (
        err.logs == tuple(logs) and "custom program error 0x1" in err.message and "nothing was sent" not in err.message
    )

    stub.error(-32002, "Transaction simulation failed: Blockhash not found", {"err": "BlockhashNotFound", "logs": []})
    err = failure(stub.url, "send", tx)
    assert isinstance(err, TransactionExpired) and "BlockhashNotFound" in err.message
    assert "nothing was spent" not in err.message

    stub.error(-32002, "Transaction simulation failed")  # no data at all
    assert isinstance(failure(stub.url, "send", tx), PreflightFailed)


def test_node_unhealthy(stub):
    stub.error(-32005, "Node is unhealthy", {"numSlotsBehind": 42})
    err = failure(stub.url, "health")
    assert isinstance(err, NetworkError) and "unhealthy" in err.message


def test_chain_modules_do_not_import_solana_py():
    code = (
        "import sys\n"
        "import yieldcli.chain.rpc.adapter, yieldcli.chain.transact.confirm\n"
        "import yieldcli.chain.tx.instructions, yieldcli.chain.tx.review\n"
        "import yieldcli.chain.keys.sign, yieldcli.chain.guard.signers\n"
        "import yieldcli.chain.keys.keypairs, yieldcli.chain.tx.decode\n"
        "from yieldcli.chain.rpc.adapter import Rpc\n"
        "Rpc('http://127.0.0.1:1')\n"
        "print(sorted(m for m in sys.modules if m == 'solana' or m.startswith('solana.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_genesis_hash_is_remembered_a_day_for_a_public_url_and_never_for_loopback(isolated):
    from yieldcli.chain.rpc import genesis_memory as memory

    url = "https://rpc.example.com/?api-key=secret-123"
    assert memory.recall(url) is None
    memory.remember(url, "GENESIS", now=1_000_000.0)
    assert memory.recall(url, now=1_000_000.0 + 3600) == "GENESIS"
    assert memory.recall(url, now=1_000_000.0 + memory.LIFETIME_SECONDS) is None  # a bounded lifetime
    assert memory.recall("https://other.example.com", now=1_000_000.0) is None
    text = memory._path().read_text()
    assert "secret-123" not in text and "example" not in text  # URLs are kept as hashes: keys never land on disk
    memory.remember("http://127.0.0.1:8899", "LOCAL", now=1_000_000.0)
    assert memory.recall("http://127.0.0.1:8899", now=1_000_000.0) is None  # a local validator can be reset


def test_a_batch_is_one_exchange_answered_in_order_with_errors_per_question(sandbox_chain):
    import asyncio

    from yieldcli.chain.rpc.adapter import Rpc, RpcError
    from yieldcli.sandbox.rpc.relay import RpcRelay

    _, server = sandbox_chain

    async def ask(url):
        async with Rpc(url) as rpc:
            rpc.ask_ahead([("getSlot", [])])
            answers = await rpc.batch([("getGenesisHash", []), ("noSuchMethod", []), ("getBlockHeight", [])])
            slot = await rpc.call("getSlot")  # answered ahead: no exchange of its own
            return answers, slot

    with RpcRelay(server.url) as relay:
        answers, slot = asyncio.run(ask(relay.url))
        assert [e.methods for e in relay.exchanges] == [("getSlot", "getGenesisHash", "noSuchMethod", "getBlockHeight")]
    assert answers[0].value() and isinstance(answers[2].value(), int) and isinstance(slot, int)
    with pytest.raises(RpcError, match="-32601"):
        answers[1].value()
