"""The service over TLS: verified against SSL_CERT_FILE when set, the OS trust store otherwise."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import TEST_API_KEY
from yieldcli import AsyncClient, Client, NetworkError
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET


@pytest.fixture(autouse=True)
def no_proxy_or_ca_environment(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def test_a_certificate_named_by_ssl_cert_file_is_trusted(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with Client(url, TEST_API_KEY) as client:
        assert client.strategy(DEMO_STRATEGY_ID).strategy_id == DEMO_STRATEGY_ID
        # Kept alive: the second read reuses the verified connection.
        assert client.positions(DEMO_WALLET, DEMO_STRATEGY_ID, limit=2).meta.per_page == 2


def test_the_async_client_trusts_the_same_certificate(monkeypatch, tls_sandbox):
    server, url, cert = tls_sandbox
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))

    async def read() -> str:
        async with AsyncClient(url, TEST_API_KEY) as client:
            return await client.health()

    assert asyncio.run(read()) == "OK"


def test_an_unknown_certificate_is_a_tls_error_from_the_os_trust_store(tls_sandbox):
    server, url, cert = tls_sandbox
    with pytest.raises(NetworkError) as info, Client(url, TEST_API_KEY) as client:
        client.health()
    assert info.value.kind == "network.tls"
    assert "certificate" in info.value.message and "localhost" in info.value.message


def test_the_async_client_refuses_an_unknown_certificate_too(tls_sandbox):
    server, url, cert = tls_sandbox

    async def read() -> str:
        async with AsyncClient(url, TEST_API_KEY) as client:
            return await client.health()

    with pytest.raises(NetworkError) as info:
        asyncio.run(read())
    assert info.value.kind == "network.tls"


def test_without_ca_variables_the_os_trust_store_verifies(monkeypatch, tmp_path):
    import ssl

    import truststore

    from yieldcli.api.tls import client_context

    assert isinstance(client_context(), truststore.SSLContext)
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    context = client_context()
    assert not isinstance(context, truststore.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED


def test_the_command_line_verifies_the_same_way(run, tls_sandbox):
    server, url, cert = tls_sandbox
    env = {"YIELD_API_URL": url, "YIELD_API_KEY": TEST_API_KEY}
    trusted = run("strategy", "info", DEMO_STRATEGY_ID, "-o", "json", env={**env, "SSL_CERT_FILE": str(cert)})
    assert trusted.code == 0 and trusted.json()["strategy_id"] == DEMO_STRATEGY_ID
    untrusted = run("strategy", "info", DEMO_STRATEGY_ID, env=env)
    assert untrusted.code == 6
    assert "TLS with localhost failed" in untrusted.stderr and "SSL_CERT_FILE" in untrusted.stderr
