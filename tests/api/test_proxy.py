"""The service client goes through the proxy the environment names, as httpx2 (solana-py) would."""

from __future__ import annotations

import asyncio
import socket

import pytest

from tests.conftest import TEST_API_KEY
from tests.library.proxy_server import ProxyServer
from yieldcli import AsyncClient, Client, NetworkError
from yieldcli.api.core import RetryPolicy
from yieldcli.api.proxy import proxy_for
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD")


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch):
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def a_closed_port() -> int:
    """A loopback port nothing listens on (bound once, then released)."""
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        return int(placeholder.getsockname()[1])


def httpx2_choice(url: str) -> str | None:
    """The proxy httpx2 itself picks for `url` from the environment (its mounts, most specific first)."""
    import httpx2
    from httpx2._utils import URLPattern, get_environment_proxies

    mounts = {URLPattern(key): proxy for key, proxy in get_environment_proxies().items()}
    for pattern in sorted(mounts):
        if pattern.matches(httpx2.URL(url)):
            return mounts[pattern]
    return None


ENVIRONMENTS = [
    {"HTTPS_PROXY": "http://proxy.corp:3128"},
    {"https_proxy": "proxy.corp:3128"},
    {"HTTP_PROXY": "http://plain:80"},
    {"ALL_PROXY": "http://all:1080"},
    {"ALL_PROXY": "http://all:1080", "HTTPS_PROXY": "http://secure:3128"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": ".example.com"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*.example.com"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com:8443"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8, 192.168.1.7"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "::1,fd00::/8"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "localhost"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "https://api.example.com"},
    {"HTTPS_PROXY": "http://p:1", "no_proxy": "EXAMPLE.com"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "bad/entry,other.org"},
    # Entries httpx2 cannot parse are ignored, not taken as "everything".
    {"HTTPS_PROXY": "http://u:pw@p:3/", "NO_PROXY": "[::1,:::,*example.com,10.0.0.0/33,example.com/path"},
    {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "[::1]:8443,192.168.1.7:443,https://example.com:8443"},
    {"HTTPS_PROXY": "socks5://s:4", "HTTP_PROXY": "p:2", "NO_PROXY": "http://[::1],LOCALHOST"},
]
URLS = [
    "https://example.com",
    "https://api.example.com",
    "https://notexample.com",
    "https://example.com:8443",
    "https://10.1.2.3",
    "https://192.168.1.7",
    "https://192.168.1.8",
    "https://[::1]:8443",
    "https://[fd00::5]",
    "https://localhost:9000",
    "http://localhost:9000",
    "http://127.0.0.1:8080",
    "https://other.org",
]


@pytest.mark.parametrize("environment", ENVIRONMENTS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()))
def test_the_proxy_chosen_for_each_url_is_the_one_httpx2_chooses(monkeypatch, environment):
    from urllib.parse import urlsplit

    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    for url in URLS:
        parts = urlsplit(url)
        ours = proxy_for(parts.scheme, parts.hostname or "", parts.port)
        theirs = httpx2_choice(url)
        expected = None if theirs is None else urlsplit(theirs)
        got = None if ours is None else (ours.scheme, ours.host, ours.port)
        assert got == (None if expected is None else (expected.scheme, expected.hostname, expected.port)), url


def test_a_https_request_goes_through_a_connect_tunnel_with_the_proxy_credentials(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with ProxyServer(credentials=("alice", "s3cret pass")) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url("alice:s3cret%20pass"))
        with Client(url, TEST_API_KEY) as client:
            assert client.strategy(DEMO_STRATEGY_ID).strategy_id == DEMO_STRATEGY_ID
        method, target, authorization = proxy.requests[0]
        assert (method, target) == ("CONNECT", f"localhost:{server.port}")
        assert authorization == proxy.expected
        # The proxy carried the request but never saw it, nor the key: it was inside TLS.
        assert proxy.tunnelled and TEST_API_KEY.encode() not in proxy.tunnelled
        assert b"strategy-info" not in proxy.tunnelled


def test_a_https_request_goes_through_a_proxy_without_credentials(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with ProxyServer() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url())
        with Client(url, TEST_API_KEY) as client:
            assert client.health() == "OK"
        assert proxy.requests == [("CONNECT", f"localhost:{server.port}", None)]


def test_the_async_client_uses_the_same_proxy(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))

    async def read() -> str:
        async with AsyncClient(url, TEST_API_KEY) as client:
            return (await client.strategy(DEMO_STRATEGY_ID)).strategy_id

    with ProxyServer(credentials=("alice", "pw")) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url("alice:pw"))
        assert asyncio.run(read()) == DEMO_STRATEGY_ID
        assert proxy.requests[0] == ("CONNECT", f"localhost:{server.port}", proxy.expected)


def test_a_proxy_that_refuses_the_credentials_is_reported_as_the_proxy(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with ProxyServer(credentials=("alice", "right")) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url("alice:wrong-secret"))
        with pytest.raises(NetworkError) as info, Client(url, TEST_API_KEY) as client:
            client.health()
    assert info.value.kind == "network.proxy"
    assert f"127.0.0.1:{proxy.port}" in info.value.message and "407" in info.value.message
    assert "wrong-secret" not in info.value.message and "alice" not in info.value.message


def test_a_proxy_that_is_not_there_is_reported_as_the_proxy(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    closed_port = a_closed_port()
    monkeypatch.setenv("HTTPS_PROXY", f"http://user:pw@127.0.0.1:{closed_port}")
    with pytest.raises(NetworkError) as info, Client(url, TEST_API_KEY) as client:
        client.health()
    assert info.value.kind == "network.proxy"
    assert f"cannot reach the proxy http://127.0.0.1:{closed_port}" in info.value.message
    assert "pw" not in info.value.message


def test_plain_http_goes_through_the_http_proxy_in_absolute_form(monkeypatch, sandbox):
    with ProxyServer(credentials=("bob", "pw")) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url("bob:pw"))
        with Client(sandbox.url, TEST_API_KEY) as client:
            assert client.strategy(DEMO_STRATEGY_ID).strategy_id == DEMO_STRATEGY_ID
        method, target, authorization = proxy.requests[0]
        assert (method, target) == ("GET", f"{sandbox.url}/strategy-info/{DEMO_STRATEGY_ID}")
        assert authorization == proxy.expected


def test_no_proxy_sends_the_request_direct(monkeypatch, sandbox):
    with ProxyServer() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url())
        monkeypatch.setenv("NO_PROXY", "127.0.0.0/8")
        with Client(sandbox.url, TEST_API_KEY) as client:
            assert client.health() == "OK"
        assert proxy.requests == []


def test_an_https_proxy_url_is_refused_clearly(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "https://user:pw@proxy.example:443")
    with pytest.raises(NetworkError) as info:
        Client("https://api.example.com", TEST_API_KEY)
    assert info.value.kind == "network.proxy" and "https://" in info.value.message and "pw" not in info.value.message


def test_the_command_line_reads_the_proxy_the_same_way_and_names_a_refusing_proxy(run, monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    env = {"YIELD_API_URL": url, "YIELD_API_KEY": TEST_API_KEY, "SSL_CERT_FILE": str(cert)}
    with ProxyServer(credentials=("carol", "pw")) as proxy:
        ok = run("strategy", "info", DEMO_STRATEGY_ID, "-o", "json", env={**env, "HTTPS_PROXY": proxy.url("carol:pw")})
        assert ok.code == 0 and ok.json()["strategy_id"] == DEMO_STRATEGY_ID
        assert proxy.requests == [("CONNECT", f"localhost:{server.port}", proxy.expected)]
        refused = run("strategy", "info", DEMO_STRATEGY_ID, env={**env, "HTTPS_PROXY": proxy.url("carol:nope")})
    assert refused.code == 6
    [line] = refused.error_lines()
    assert line.startswith("error: the proxy http://127.0.0.1:") and "407" in line and "nope" not in refused.stderr
    assert "(hint: check HTTPS_PROXY" in line


def test_the_async_client_names_a_refusing_proxy_without_its_credentials(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))

    async def read() -> str:
        async with AsyncClient(url, TEST_API_KEY) as client:
            return await client.health()

    with ProxyServer(credentials=("alice", "right")) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url("alice:wrong-secret"))
        with pytest.raises(NetworkError) as info:
            asyncio.run(read())
    assert info.value.kind == "network.proxy"
    assert f"the proxy http://127.0.0.1:{proxy.port} refused" in info.value.message and "407" in info.value.message
    assert "wrong-secret" not in info.value.message


def test_the_async_client_names_a_proxy_that_is_not_there(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    closed_port = a_closed_port()
    monkeypatch.setenv("HTTPS_PROXY", f"http://user:pw@127.0.0.1:{closed_port}")

    async def read() -> str:
        async with AsyncClient(url, TEST_API_KEY) as client:
            client._api._core._retry = RetryPolicy(attempts=1)
            return await client.health()

    with pytest.raises(NetworkError) as info:
        asyncio.run(read())
    assert info.value.kind == "network.proxy" and f"127.0.0.1:{closed_port}" in info.value.message
    assert "pw" not in info.value.message


def test_proxy_credentials_stay_out_of_reprs(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://alice:hunter2@proxy.corp:3128")
    proxy = proxy_for("https", "api.example.com", None)
    assert proxy is not None and proxy.authorization == "Basic YWxpY2U6aHVudGVyMg=="
    assert "hunter2" not in repr(proxy) and "YWxpY2U6aHVudGVyMg" not in repr(proxy) and "alice" not in repr(proxy)
