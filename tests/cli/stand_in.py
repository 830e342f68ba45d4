"""A stand-in service in front of the sandbox's that rewrites the transactions it builds, and the
`World` of the intent tests around it: the sandbox, the stand-in, a stranger with a USDC account, and
`yield` pointed at the stand-in. Shared by the intent tests of the command line, the library and the
agent server (the `world` fixture is in tests/conftest.py).

A rewritten transaction is decompiled, changed, and compiled again with solders for the same payer and
blockhash.
"""

from __future__ import annotations

import base64
import http.client
import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from tests.conftest import TEST_API_KEY, write_keypair, writing_client
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET, demo_keypair
from yieldcli.solana import programs, strategy_program
from yieldcli.tokens import by_symbol

WALLET = Pubkey.from_string(DEMO_WALLET)
USDC_MINT = Pubkey.from_string(by_symbol("USDC").mint)
TOKEN = Pubkey.from_string(programs.TOKEN_PROGRAM)
USER_ATA = programs.associated_token_address(WALLET, USDC_MINT)


class StandIn:
    """A service in front of the sandbox's: everything passes through, `doctor` rewrites built transactions."""

    def __init__(self, upstream: str):
        self.upstream = urlsplit(upstream)
        self.doctor = None  # VersionedTransaction -> VersionedTransaction
        self.reshape = None  # base64 text -> (body, content type): a /tx answer in another published shape
        self.doctor_ix = None  # the decoded /ix answer -> the one served instead
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_GET(self):
                self._forward()

            def do_POST(self):
                self._forward()

            def log_message(self, *args):
                pass

            def _forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                conn = http.client.HTTPConnection(stand_in.upstream.hostname, stand_in.upstream.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                answer = conn.getresponse()
                payload = answer.read()
                content_type = None
                is_tx = self.path.split("?")[0] in ("/deposit/tx", "/withdraw/tx", "/close-user-account/tx")
                if answer.status == 200 and is_tx and stand_in.doctor:
                    tx = VersionedTransaction.from_bytes(base64.b64decode(json.loads(payload)))
                    payload = json.dumps(base64.b64encode(bytes(stand_in.doctor(tx))).decode()).encode()
                is_ix = self.path.split("?")[0] in ("/deposit/ix", "/withdraw/ix", "/close-user-account/ix")
                if answer.status == 200 and is_ix and stand_in.doctor_ix:
                    payload = json.dumps(stand_in.doctor_ix(json.loads(payload))).encode()
                if answer.status == 200 and is_tx and stand_in.reshape:
                    payload, content_type = stand_in.reshape(json.loads(payload))
                self.send_response(answer.status)
                dropped = {"content-length", "connection", "transfer-encoding", "date", "server"}
                if content_type is not None:
                    dropped.add("content-type")
                for name, value in answer.getheaders():
                    if name.lower() not in dropped:
                        self.send_header(name, value)
                if content_type is not None:
                    self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                conn.close()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def decompile(tx: VersionedTransaction, tables: dict[Pubkey, list[Pubkey]]) -> list[Instruction]:
    """The instructions of a v0 message, its lookup-table accounts resolved."""
    msg = tx.message
    static = list(msg.account_keys)
    loaded_w, loaded_r = [], []
    for lookup in msg.address_table_lookups:
        loaded_w += [tables[lookup.account_key][i] for i in lookup.writable_indexes]
        loaded_r += [tables[lookup.account_key][i] for i in lookup.readonly_indexes]
    keys, h = static + loaded_w + loaded_r, msg.header

    def writable(i: int) -> bool:
        if i < h.num_required_signatures:
            return i < h.num_required_signatures - h.num_readonly_signed_accounts
        if i < len(static):
            return i < len(static) - h.num_readonly_unsigned_accounts
        return i < len(static) + len(loaded_w)

    return [
        Instruction(
            keys[ix.program_id_index],
            bytes(ix.data),
            [AccountMeta(keys[a], a < h.num_required_signatures, writable(a)) for a in ix.accounts],
        )
        for ix in msg.instructions
    ]


def recompile(
    tx: VersionedTransaction, ixs: list[Instruction], tables: dict[Pubkey, list[Pubkey]]
) -> VersionedTransaction:
    """Compiled again for the same payer and blockhash, every signature slot empty."""
    accounts = [AddressLookupTableAccount(k, v) for k, v in tables.items()]
    message = MessageV0.try_compile(tx.message.account_keys[0], ixs, accounts, tx.message.recent_blockhash)
    return VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)


def rpc_call(url: str, method: str, params: list) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())["result"]


class World:
    """The sandbox, the stand-in in front of it, a stranger with a USDC account, and `yield` pointed at the stand-in."""

    def __init__(self, sandbox, run, tmp_path):
        self.sandbox, self.run = sandbox, run
        self.runtime = sandbox.runtime
        self.stand_in = StandIn(sandbox.url)
        self.stranger = Keypair().pubkey()
        self.stranger_ata = self.runtime.create_associated_token_account(self.stranger, USDC_MINT)
        self.keypair = write_keypair(tmp_path / "demo.json", demo_keypair())
        table = self.sandbox.chain.lookup_table.key
        self.tables = {table: self.runtime.lookup_table_addresses(table)}

    def env(self) -> dict[str, str]:
        return {
            "YIELD_API_URL": self.stand_in.url,
            "YIELD_API_KEY": TEST_API_KEY,
            "YIELD_RPC_URL": self.sandbox.rpc_url,
            "YIELD_KEYPAIR": self.keypair,
            "YIELD_STRATEGY": DEMO_STRATEGY_ID,
        }

    def yield_(self, *args, **kwargs):
        return self.run(*args, env=self.env(), **kwargs)

    def client(self, **more):
        """The library's `Client` with the settings `env()` gives `yield`."""
        return writing_client(self.sandbox, self.keypair + ".journal", api_url=self.stand_in.url, **more)

    def doctor(self, change, extra_tables: dict | None = None):
        """Serve the sandbox's transactions with `change(instructions)` applied."""
        tables = {**self.tables, **(extra_tables or {})}

        def rewrite(tx):
            return recompile(tx, change(decompile(tx, self.tables)), tables)

        self.stand_in.doctor = rewrite

    def snapshot(self) -> list:
        """Every account an attack could touch, read back through the sandbox's RPC."""
        position = strategy_program.position_address(WALLET, DEMO_STRATEGY_ID, USDC_MINT)
        vault = strategy_program.vault_address(USDC_MINT)
        addresses = [DEMO_WALLET, str(USER_ATA), str(self.stranger), str(self.stranger_ata), str(position), str(vault)]
        config = {"encoding": "base64", "commitment": "confirmed"}
        return rpc_call(self.sandbox.rpc_url, "getMultipleAccounts", [addresses, config])["value"]
