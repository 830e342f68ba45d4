"""`yield mcp --http` (loopback, bearer token, DNS-rebinding protection), `yield mcp audit` and its
hash chain, what `yield mcp` costs the other commands (nothing: they never import the SDK), and its
refusal of a setup the other commands refuse."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time

import anyio
import pytest

from tests.conftest import TEST_API_KEY, YIELD
from tests.mcp.harness import POLICY, Echoing, answering, secret_forms, server_env, session, structured, write_private


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(sandbox, isolated):
    with serving_http(server_env(sandbox, isolated)) as served:
        yield served


@contextlib.contextmanager
def serving_http(env):
    port = free_port()
    proc = subprocess.Popen(
        [YIELD, "mcp", "--http", "--port", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = proc.stderr.readline() + proc.stderr.readline()
        token = re.search(r"bearer token: (\S+)", banner).group(1)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield port, token, banner
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def post(port: int, headers: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    conn.request(
        "POST",
        "/mcp",
        body=body,
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    return conn.getresponse().status


def test_http_listens_on_loopback_and_wants_the_printed_token_and_a_local_host(http_server):
    port, token, banner = http_server
    assert f"http://127.0.0.1:{port}/mcp" in banner
    with pytest.raises(OSError):  # not on any other interface
        other = socket.gethostbyname(socket.gethostname())
        if other.startswith("127."):
            raise OSError("no other interface to try")
        socket.create_connection((other, port), timeout=1).close()
    assert post(port, {}) == 401
    assert post(port, {"Authorization": "Bearer wrong"}) == 401
    good = {"Authorization": f"Bearer {token}"}
    # A page on another origin that rebinds its name to 127.0.0.1 sends its own Host and Origin.
    assert post(port, {**good, "Host": f"evil.example:{port}"}) in (403, 421)
    assert post(port, {**good, "Origin": "http://evil.example"}) in (403, 421)

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def body():
        transport = streamable_http_client(
            f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(headers=good)
        )
        async with Client(transport) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            return tools, await client.call_tool("health", {})

    tools, health = anyio.run(body)
    assert "execute" in tools and structured(health) == {"status": "OK"}


def test_yield_mcp_audit_prints_a_private_hash_chained_log_and_finds_an_edit(sandbox, isolated, run):
    env = server_env(sandbox, isolated)
    policy = write_private(isolated / "policy" / "policy.toml", POLICY)

    async def body():
        async with session(env, "--policy", str(policy), elicit=answering("decline")) as client:
            answer = structured(await client.call_tool("prepare_deposit", {"asset": "USDC", "amount": "5"}))
            await client.call_tool("execute", {"proposal_id": answer["proposal_id"]})
            audit = json.loads((await client.read_resource("yield://audit")).contents[0].text)
            return answer, audit

    answer, audit = anyio.run(body)
    assert audit["chain"] == "intact" and [e["event"] for e in audit["entries"]] == ["prepare", "proposed", "declined"]
    path = isolated / ".local" / "share" / "yield" / "mcp-audit.jsonl"
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    result = run("mcp", "audit", env=env)
    assert result.code == 0 and "hash chain intact" in result.stderr
    entries = [json.loads(line) for line in result.stdout.splitlines()]
    assert entries[1]["proposal"] == answer["proposal_id"] and entries[1]["decision"]["verdict"] == "approval"
    # Someone rewrites history: the declined write becomes an approval.
    path.write_text(path.read_text().replace('"event":"declined"', '"event":"approved"'))
    tampered = run("mcp", "audit", env=env)
    assert tampered.code == 3 and "altered: entry 3 was not written by yield" in tampered.stderr


def test_other_commands_never_import_the_mcp_sdk(sandbox, isolated):
    env = server_env(sandbox, isolated)
    probe = (
        "import sys, runpy\nsys.argv = ['yield', 'health']\n"
        "try:\n    runpy.run_module('yieldcli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'yieldcli.mcp'))))"
    )
    result = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert '"OK"' in result.stdout and "LOADED []" in result.stdout, result


def test_a_key_that_cannot_be_sent_stops_yield_mcp_as_it_stops_yield_health(sandbox, isolated, run):
    """Both resolve the service's URL and key by one path (`Session.service`): the same refusal, before serving."""
    env = {**server_env(sandbox, isolated), "YIELD_API_KEY": "not a key\tat all"}
    health = run("health", env=env)
    served = run("mcp", env=env, input="")  # standard input at its end: a server that started would stop there
    assert health.code == 3 and "the API key from YIELD_API_KEY cannot be sent" in health.stderr, health
    assert (served.code, served.stdout, served.stderr) == (health.code, "", health.stderr)
    assert "not a key" not in health.stderr


def test_over_http_an_api_key_echoed_by_the_service_never_reaches_the_agent(sandbox, isolated):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    echo = Echoing(401)
    try:
        with serving_http(server_env(sandbox, isolated, api_url=echo.url)) as (port, token, _):

            async def body():
                headers = {"Authorization": f"Bearer {token}"}
                transport = streamable_http_client(
                    f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(headers=headers)
                )
                async with Client(transport) as client:
                    return [await client.call_tool(name, {}) for name in ("strategy", "positions", "health")]

            answers = anyio.run(body)
    finally:
        echo.stop()
    assert all(a.is_error and "invalid x-api-key" in a.content[0].text for a in answers), answers
    for form in secret_forms(TEST_API_KEY):
        assert form not in str(answers), form
