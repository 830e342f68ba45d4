"""Issue 36: no secret in any text an agent sees. The service and the RPC are reached through URLs that
carry keys in every part but scheme, host and port (user name and password, path segments, query
values, the fragment); a hostile service and a hostile RPC, loopback stand-ins in front of the
sandbox, repeat in their errors everything they were sent (the path, the query, the Authorization
and x-api-key headers, decoded and encoded). The keypair's path, named by the system's error when the
file is gone, is a secret too. The same for `yield -v`."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import anyio
import pytest

from tests.conftest import TEST_API_KEY
from tests.mcp.harness import POLICY, answering, server_env, session, structured, write_private
from tests.mcp.test_server_attacks import usdc

SERVICE_KEYS = ("svcuser-a1b2", "SvcPass-c3d4", "SvcPathKey-e5f6", "SvcQueryKey-g7h8", "SvcFrag-i9j0")
RPC_KEYS = ("rpcuser-k1l2", "RpcPass-m3n4", "RpcPathKey-o5p6", "RpcQueryKey-q7r8", "RpcFrag-s9t0")


def url_with_keys(port: int, keys: tuple[str, ...], prefix: str) -> str:
    user, password, path, query, fragment = keys
    return f"http://{user}:{password}@127.0.0.1:{port}/{prefix}/{path}/v?api-key={query}#{fragment}"


class Repeating:
    """A loopback server that passes requests on to `upstream` (its own path and query taken off) and
    answers those `hostile(path, body)` picks with an error repeating everything it was sent."""

    def __init__(self, upstream: str, hostile, rpc: bool, extra: str = ""):
        import http.client

        target = urlsplit(upstream)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                rest = self.path[len(outer.prefix) :] if self.path.startswith(outer.prefix) else self.path
                if hostile(rest, body):
                    basic = [
                        base64.b64decode(v.split()[-1]).decode()
                        for k, v in self.headers.items()
                        if k.lower() == "authorization"
                    ]
                    parts = urlsplit(self.path)
                    sent = " | ".join(
                        [self.path, unquote(self.path), *(f"{k}: {v}" for k, v in self.headers.items())]
                        # each part on its own too: "unknown tenant KEY", "user NAME", "password PASS"
                        + [f"tenant {segment}" for segment in parts.path.split("/")]
                        + [f"value {value}" for _, value in parse_qsl(parts.query)]
                        + [*basic, *(f"who {part}" for pair in basic for part in pair.split(":"))]
                        + [extra]
                    )
                    if rpc:
                        calls = json.loads(body)
                        answers = [
                            {
                                "jsonrpc": "2.0",
                                "id": call.get("id"),
                                "error": {"code": -32600, "message": f"bad: {sent}"},
                            }
                            for call in (calls if isinstance(calls, list) else [calls])
                        ]
                        payload, status = answers if isinstance(calls, list) else answers[0], 200
                    else:
                        payload, status = {"message": f"refused: {sent}"}, 500
                    data = json.dumps(payload).encode()
                else:
                    conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "authorization")}
                    conn.request(self.command, rest if not rpc else "/", body=body or None, headers=headers)
                    answer = conn.getresponse()
                    data, status = answer.read(), answer.status
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.prefix = ""
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def every_form(secret: str) -> list[str]:
    raw = secret.encode()
    return [secret, quote(secret, safe=""), base64.b64encode(raw).decode().rstrip("="), raw.hex()]


def forbidden(*more: str) -> list[str]:
    keys = [*SERVICE_KEYS, *RPC_KEYS, TEST_API_KEY, *more]
    basic = [f"{SERVICE_KEYS[0]}:{SERVICE_KEYS[1]}", f"{RPC_KEYS[0]}:{RPC_KEYS[1]}"]
    return [form for secret in [*keys, *basic] for form in every_form(secret)]


@pytest.fixture
def hostile(sandbox):
    """The service repeats what it was sent on every read of positions; the RPC on every simulation."""
    service = Repeating(
        sandbox.url, lambda path, body: "/breeze-balances/" in path or "/user-balances/" in path, rpc=False
    )
    chain = Repeating(sandbox.rpc_url, lambda path, body: b"simulateTransaction" in body, rpc=True)
    service_url = url_with_keys(service.port, SERVICE_KEYS, "t")
    rpc_url = url_with_keys(chain.port, RPC_KEYS, "rpc")
    service.prefix = urlsplit(service_url).path
    chain.prefix = urlsplit(rpc_url).path
    yield service_url, rpc_url
    service.stop()
    chain.stop()


def test_keys_in_every_part_of_both_urls_repeated_by_the_service_and_the_rpc_reach_no_agent(
    sandbox, isolated, hostile, run
):
    service_url, rpc_url = hostile
    env = {**server_env(sandbox, isolated, api_url=service_url), "YIELD_RPC_URL": rpc_url}
    policy = write_private(isolated / "policy" / "p.toml", POLICY)
    before = usdc(sandbox)

    async def body():
        with anyio.fail_after(90):
            async with session(env, "--policy", str(policy), elicit=answering("decline")) as client:
                return [
                    await client.call_tool("strategy", {}),
                    await client.call_tool("positions", {}),
                    await client.call_tool("balances", {}),
                    await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "1"}),
                    await client.read_resource("yield://audit"),
                    await client.read_resource("yield://policy"),
                ]

    answers = anyio.run(body)
    assert not answers[0].is_error, answers[0]  # the service works: only its errors are hostile
    assert answers[1].is_error and "refused:" in structured(answers[1])["error"]["message"], answers[1]
    assert answers[3].is_error and "bad:" in structured(answers[3])["error"]["message"], answers[3]
    verbose = [run("-v", *args, env=env) for args in (("positions",), ("deposit", "--asset", "USDC", "--amount", "1"))]
    assert "refused:" in verbose[0].stderr and "bad:" in verbose[1].stderr + verbose[1].stdout, verbose
    seen = "\n".join([*map(str, answers), *(r.stdout + r.stderr for r in verbose)])
    for form in forbidden():
        assert form not in seen, form
    assert usdc(sandbox) == before


def test_the_keypairs_path_repeated_by_the_service_reaches_no_agent(sandbox, isolated):
    """A service that knows where keys are kept (the default place is no secret) names the file in its
    error, as written, absolute and from `~`: the agent learns nothing of where the key is."""
    keypair = isolated / "keys" / "wallet.json"
    named = f"{keypair} ~/keys/wallet.json {keypair.resolve()}"
    service = Repeating(sandbox.url, lambda path, body: "/breeze-balances/" in path, rpc=False, extra=named)
    env = server_env(sandbox, isolated, api_url=f"http://127.0.0.1:{service.port}")

    async def body():
        with anyio.fail_after(90):
            async with session(env, elicit=answering("decline")) as client:
                return await client.call_tool("positions", {})

    try:
        answer = anyio.run(body)
    finally:
        service.stop()
    assert answer.is_error and "refused:" in structured(answer)["error"]["message"], answer
    for form in (str(keypair), str(keypair.resolve()), "~/keys/wallet.json"):
        assert form not in str(answer), (form, answer)
