"""A sandbox chain served over loopback (JSON-RPC and PubSub), and a raw JSON-RPC call for what a client
library does not expose."""

from __future__ import annotations

import json
import urllib.request

import pytest
from solders.instruction import AccountMeta
from solders.pubkey import Pubkey

from yieldcli.sandbox.chain.knobs import Network
from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.runtime import Runtime


@pytest.fixture
def node(tmp_path):
    """(runtime, server) of a fresh chain, slots of 50 ms so time moves within a test."""
    runtime = Runtime(tmp_path / "chain.json", network=Network(slot_ms=50))
    server = RpcServer(runtime).start()
    yield runtime, server
    server.stop()


@pytest.fixture
def still(tmp_path):
    """A chain whose slots pass only when a transaction lands or the test moves them."""
    runtime = Runtime(tmp_path / "chain.json", network=Network(slot_ms=0))
    with RpcServer(runtime) as server:
        yield runtime, server


def call(url: str, method: str, params: list | None = None) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def result(url: str, method: str, params: list | None = None):
    answer = call(url, method, params)
    assert "error" not in answer, answer
    return answer["result"]


def w(key: Pubkey, signer: bool = False) -> AccountMeta:
    """A writable account of an instruction the tests build by hand."""
    return AccountMeta(key, signer, True)


def r(key: Pubkey, signer: bool = False) -> AccountMeta:
    """A read-only account of an instruction the tests build by hand."""
    return AccountMeta(key, signer, False)
