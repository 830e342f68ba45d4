"""`Client(transport=...)` and `AsyncClient(transport=...)`: code that uses a client, tested with no server.

A `MockTransport` answers with a function, as `httpx.MockTransport` does: the reads, every page of a
listing, the errors a network gives, and the x-api-key header all go through it. One test drives a
real read end to end through a transport of the caller's own that forwards to the sandbox on loopback.
"""

from __future__ import annotations

import asyncio
import http.client
import socket
import ssl
import subprocess
import sys
import threading
from urllib.parse import urlsplit

import httpx2
import pytest

from tests.conftest import TEST_API_KEY
from yieldcli import AsyncClient, AuthError, Client, NetworkError, Position, ServiceError, Strategy
from yieldcli.api.core import RetryPolicy
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET
from yieldcli.testing import MockTransport, Request, Response, TransportError

KEY = "caller-test-key-7d2e9b41c0a5"
STRATEGY = "strategy-under-test"


class Service:
    """A handler standing in for the service: strategy info, and `count` positions of a wallet, paged
    as the service pages them. It keeps every request it was handed."""

    def __init__(self, count: int = 250, prefix: str = ""):
        self.count = count
        self.prefix = prefix  # the base URL's path
        self.requests: list[Request] = []
        self.busy: set[tuple[str, str]] = set()  # (path, page) answered 503 once, then served

    def value(self, wallet: str, i: int) -> int:
        return (len(wallet) * 1_000_003 + i * 7_919) * 10**6  # exact integers, past 2**53 for big i too

    def __call__(self, request: Request) -> Response:
        self.requests.append(request)
        if request.headers.get("x-api-key") != KEY:
            return Response(401, json={"message": "API key invalid or doesn't exist"})
        path = request.path.removeprefix(self.prefix)
        if path == f"/strategy-info/{STRATEGY}":
            return Response(
                200, json={"strategy_id": STRATEGY, "strategy_name": "Under test", "assets": ["M"], "apy": 4}
            )
        wallet = path.removeprefix("/breeze-balances/")
        if wallet == path:
            return Response(404, json={"message": f"no route {path}"})
        page, limit = int(request.params.get("page", 1)), int(request.params.get("limit", 20))
        if (path, str(page)) in self.busy:
            self.busy.discard((path, str(page)))
            return Response(503, headers={"Retry-After": "0"}, text="busy")
        pages = max(1, -(-self.count // limit))
        items = [self.item(wallet, i) for i in range((page - 1) * limit, min(page * limit, self.count))]
        meta = {"page": page, "per_page": limit, "total": self.count, "total_pages": pages, "has_more": page < pages}
        return Response(200, json={"data": items, "meta": meta})

    def item(self, wallet: str, i: int) -> dict[str, object]:
        value = self.value(wallet, i)
        return {
            "token_address": "M",
            "token_symbol": "USDC",
            "token_name": "USD Coin",
            "decimals": 6,
            "fund_id": f"fund-{i}",
            "strategy_name": "Under test",
            "total_deposited_value": value,
            "total_position_value": value + i,
            "yield_earned": i,
            "apy": 4.5,
            "last_updated": "2026-11-28T00:00:00Z",
        }

    def pages_asked(self) -> list[int]:
        return [int(r.params["page"]) for r in self.requests if "page" in r.params]


@pytest.fixture
def service():
    return Service()


@pytest.fixture
def client(service):
    with Client(api_key=KEY, strategy=STRATEGY, transport=MockTransport(service)) as c:
        yield c


@pytest.fixture
def no_backoff(monkeypatch):
    """Retries without their backoff's sleep: what is retried, and how often, stays the client's."""
    monkeypatch.setattr(RetryPolicy, "delay", lambda self, attempt, retry_after: 0.0)


# --- the blocking client --------------------------------------------------------------------------------


def test_a_read_goes_through_the_transport_with_the_api_key_header(client, service):
    strategy = client.strategy()
    assert isinstance(strategy, Strategy) and strategy.strategy_id == STRATEGY and strategy.assets == ["M"]
    (request,) = service.requests
    assert request.method == "GET" and request.content == b""
    assert request.url == f"{client.api_url}/strategy-info/{STRATEGY}"
    assert request.headers["x-api-key"] == KEY and request.headers["user-agent"].startswith("yield/")


def test_every_page_goes_through_the_transport_in_order(client, service):
    positions = list(client.iter_positions("WALLET", limit=40))
    assert all(isinstance(p, Position) for p in positions)
    assert [p.total_position_value for p in positions] == [service.value("WALLET", i) + i for i in range(250)]
    assert service.pages_asked() == list(range(1, 8))  # 250 items, 40 a page: one request a page, in order
    assert {r.params["strategy_id"] for r in service.requests} == {STRATEGY}


def test_every_page_of_a_listing_as_the_command_line_reads_it_goes_through_the_transport(client, service):
    result = client.page_result("positions", "WALLET", every=True, limit=60)
    values = [raw["total_position_value"] for raw, _ in result.entries]
    assert values == [service.value("WALLET", i) + i for i in range(250)]
    assert result.meta()["total"] == 250 and service.pages_asked() == [1, 2, 3, 4, 5]


def test_many_wallets_go_through_the_transport_and_the_handler_never_runs_twice_at_once(service):
    running, most = [0], [0]
    lock = threading.Lock()

    def handler(request: Request) -> Response:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            threading.Event().wait(0.005)  # long enough for another thread to come in, were it let in
            return service(request)
        finally:
            with lock:
                running[0] -= 1

    wallets = [f"WALLET{n}" for n in range(6)]
    with Client(api_key=KEY, strategy=STRATEGY, concurrency=4, transport=MockTransport(handler)) as client:
        found = dict(client.each_wallet("positions", wallets, every=True, limit=100))
    assert list(found) == wallets and most[0] == 1
    for wallet in wallets:
        result = found[wallet]
        assert not isinstance(result, Exception), result
        assert [raw["total_position_value"] for raw, _ in result.entries][-1] == service.value(wallet, 249) + 249


def test_a_busy_page_is_retried_through_the_transport(client, service):
    service.busy.add(("/breeze-balances/WALLET", "2"))
    positions = list(client.iter_positions("WALLET", limit=100))
    assert len(positions) == 250 and service.pages_asked() == [1, 2, 2, 3]


def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else(service):
    def handler(request: Request) -> Response:
        service.requests.append(request)
        return Response(302, headers={"Location": "https://elsewhere.example/steal"})

    with Client(api_key=KEY, transport=MockTransport(handler)) as client, pytest.raises(ServiceError) as raised:
        client.health()
    assert raised.value.kind == "service.redirect" and len(service.requests) == 1


def test_the_service_refusing_the_key_is_an_auth_error(service):
    other = Client(api_key="another-key-0000000000", strategy=STRATEGY, transport=MockTransport(service))
    with other as client, pytest.raises(AuthError) as raised:
        client.strategy()
    assert raised.value.kind == "auth.rejected"


def test_the_key_never_shows_in_a_repr_nor_in_an_error_it_was_echoed_in(client, service):
    client.strategy()
    (request,) = service.requests
    assert KEY not in repr(request) and KEY not in repr(request.headers)
    assert request.headers["x-api-key"] == KEY  # masked when shown, whole when read

    def echoes(request: Request) -> Response:
        if request.path == "/health":
            raise ConnectionResetError(f"reset while sending x-api-key: {request.headers['x-api-key']}")
        return Response(400, json={"message": f"bad key {request.headers['x-api-key']}"})

    with Client(api_key=KEY, strategy=STRATEGY, transport=MockTransport(echoes)) as echoing:
        with pytest.raises(ServiceError) as answered:
            echoing.strategy()
        with pytest.raises(NetworkError) as failed:
            echoing.health()
    assert answered.value.kind == "service.status" and "bad key" in str(answered.value)
    assert failed.value.kind == "network.unreachable" and "reset while sending" in str(failed.value)
    assert KEY not in str(answered.value) and KEY not in str(failed.value)


@pytest.mark.parametrize(
    ("raised", "kind"),
    [
        (ConnectionRefusedError(), "network.unreachable"),
        (socket.gaierror(-2, "Name or service not known"), "network.unreachable"),
        (TimeoutError("timed out"), "network.timeout"),
        (ssl.SSLCertVerificationError(1, "certificate verify failed"), "network.tls"),
        (TransportError("the proxy said no", "proxy"), "network.proxy"),
    ],
    ids=["refused", "no-such-host", "timeout", "tls", "proxy"],
)
def test_a_handler_raising_a_network_failure_is_that_network_error_retried_as_one(raised, kind, no_backoff):
    attempts = []

    def handler(request: Request) -> Response:
        attempts.append(request)
        raise raised

    with Client(api_key=KEY, transport=MockTransport(handler)) as client, pytest.raises(NetworkError) as failed:
        client.health()
    assert failed.value.kind == kind and len(attempts) == RetryPolicy().attempts


def test_a_refused_connection_reads_the_same_from_a_handler_as_from_a_real_socket(no_backoff):
    with socket.socket() as placeholder:  # a loopback port nobody listens on
        placeholder.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{placeholder.getsockname()[1]}"

    def refused(request: Request) -> Response:
        raise ConnectionRefusedError

    errors = []
    for transport in (None, MockTransport(refused)):
        with Client(url, KEY, transport=transport) as client, pytest.raises(NetworkError) as failed:
            client.health()
        errors.append((failed.value.kind, str(failed.value), failed.value.exit_code))
    assert errors[0] == errors[1] and errors[0][0] == "network.unreachable"


def test_any_other_exception_of_the_handler_reaches_the_caller_as_it_is():
    def handler(request: Request) -> Response:
        raise KeyError("a bug in the test's own handler")

    with Client(api_key=KEY, transport=MockTransport(handler)) as client, pytest.raises(KeyError):
        client.health()


def test_a_handler_answering_something_else_or_a_coroutine_is_a_type_error():
    async def later(request: Request) -> Response:
        return Response(200, json="OK")

    text = MockTransport(lambda request: "OK")
    with Client(api_key=KEY, transport=text) as client, pytest.raises(TypeError, match="not a yieldcli.testing.Resp"):
        client.health()
    with Client(api_key=KEY, transport=MockTransport(later)) as client, pytest.raises(TypeError, match="AsyncClient"):
        client.health()


def test_a_transport_with_no_method_for_the_client_is_refused_when_the_client_is_made():
    class AsyncOnly:
        async def handle_async_request(self, request: Request) -> Response:
            return Response(200, json="OK")

    with pytest.raises(TypeError, match="handle_request"):
        Client(api_key=KEY, transport=AsyncOnly())


def test_closing_the_client_closes_its_transport():
    closed = []

    class Recorded(MockTransport):
        def close(self) -> None:
            closed.append("close")

    client = Client(api_key=KEY, transport=Recorded(lambda request: Response(200, json="OK")))
    assert client.health() == "OK"
    client.close()
    assert closed == ["close"]


def test_a_client_from_a_profile_reads_through_the_transport_with_the_profiles_key(isolated, monkeypatch):
    service = Service(prefix="/v1")
    config = isolated / ".config" / "yield" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[profiles.work]\napi_url = "https://service.example/v1"\nstrategy = "{STRATEGY}"\n')
    monkeypatch.setenv("YIELD_API_KEY", KEY)
    with Client.from_profile("work", transport=MockTransport(service)) as client:
        assert client.strategy().strategy_id == STRATEGY
    (request,) = service.requests
    assert request.url == f"https://service.example/v1/strategy-info/{STRATEGY}" and request.headers["x-api-key"] == KEY


# --- the asyncio client ---------------------------------------------------------------------------------


def test_the_async_client_reads_and_pages_through_the_same_transport(service):
    async def handler(request: Request) -> Response:
        await asyncio.sleep(0)  # an async handler: awaited
        return service(request)

    async def main() -> tuple[Strategy, list[Position]]:
        async with AsyncClient(api_key=KEY, strategy=STRATEGY, transport=MockTransport(handler)) as client:
            return await client.strategy(), [p async for p in client.iter_positions("WALLET", limit=40)]

    strategy, positions = asyncio.run(main())
    assert strategy.strategy_id == STRATEGY
    assert [p.total_position_value for p in positions] == [service.value("WALLET", i) + i for i in range(250)]
    assert sorted(service.pages_asked()) == list(range(1, 8))  # pages after the first asked concurrently
    assert all(r.headers["x-api-key"] == KEY for r in service.requests)


def test_the_async_client_maps_a_handlers_network_failure_and_closes_the_transport(no_backoff):
    closed = []

    class Recorded(MockTransport):
        async def aclose(self) -> None:
            closed.append("aclose")

    def handler(request: Request) -> Response:
        raise TimeoutError

    async def main() -> NetworkError:
        async with AsyncClient(api_key=KEY, transport=Recorded(handler)) as client:
            try:
                await client.health()
            except NetworkError as exc:
                return exc
        raise AssertionError("no error")

    assert asyncio.run(main()).kind == "network.timeout" and closed == ["aclose"]


def test_a_transport_for_the_blocking_client_only_is_refused_by_the_async_client():
    class BlockingOnly:
        def handle_request(self, request: Request) -> Response:
            return Response(200, json="OK")

    with pytest.raises(TypeError, match="handle_async_request"):
        AsyncClient(api_key=KEY, transport=BlockingOnly())


# --- end to end: a transport of the caller's own, forwarding to the sandbox on loopback -----------------


class Forwarding:
    """A caller's transport: each request sent on to the sandbox with `http.client`, the answer handed back."""

    def __init__(self, url: str):
        self.host, self.port = urlsplit(url).hostname, urlsplit(url).port
        self.sent: list[str] = []

    def handle_request(self, request: Request) -> Response:
        self.sent.append(request.path)
        parts = urlsplit(request.url)
        connection = http.client.HTTPConnection(self.host, self.port, timeout=request.timeout)
        try:
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            connection.request(request.method, target, body=request.content or None, headers=dict(request.headers))
            answer = connection.getresponse()
            return Response(answer.status, headers=dict(answer.getheaders()), content=answer.read())
        finally:
            connection.close()


def test_a_real_read_end_to_end_through_a_transport_that_forwards_to_the_sandbox(sandbox):
    forwarding = Forwarding(sandbox.url)
    with (
        Client(sandbox.url, TEST_API_KEY, strategy=DEMO_STRATEGY_ID, transport=forwarding) as through,
        Client(sandbox.url, TEST_API_KEY, strategy=DEMO_STRATEGY_ID) as direct,
    ):
        assert through.strategy() == direct.strategy()
        forwarded = list(through.iter_positions(DEMO_WALLET, limit=3))
        assert forwarded == list(direct.iter_positions(DEMO_WALLET, limit=3)) and len(forwarded) > 3
    assert forwarding.sent[0] == f"/strategy-info/{DEMO_STRATEGY_ID}"
    assert forwarding.sent.count(f"/breeze-balances/{DEMO_WALLET}") == -(-len(forwarded) // 3)
    # The key went through the transport, and the sandbox judged it.
    wrong_key = Client(sandbox.url, "not-the-sandbox-key", strategy=DEMO_STRATEGY_ID, transport=forwarding)
    with wrong_key as refused, pytest.raises(AuthError):
        refused.strategy()


def test_without_a_transport_the_seam_is_not_even_imported(sandbox):
    # The default path stays as it was (start-up and paging: bench/run.py): one read and every page.
    probe = (
        "import sys\nfrom yieldcli import Client\n"
        "with Client(sys.argv[1], sys.argv[2], strategy=sys.argv[3]) as c:\n"
        "    c.strategy()\n    assert len(list(c.iter_positions(sys.argv[4], limit=2))) > 2\n"
        "print(sorted(m for m in sys.modules if m in ('yieldcli.api.seam', 'yieldcli.testing')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, sandbox.url, TEST_API_KEY, DEMO_STRATEGY_ID, DEMO_WALLET],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_an_async_read_end_to_end_through_a_transport_that_forwards_to_the_sandbox(sandbox):
    class AsyncForwarding:
        """A caller's async transport on httpx2: each request sent on as it is, the answer handed back."""

        def __init__(self) -> None:
            self.http = httpx2.AsyncClient()
            self.sent: list[str] = []

        async def handle_async_request(self, request: Request) -> Response:
            self.sent.append(request.path)
            answer = await self.http.request(
                request.method, request.url, headers=dict(request.headers), content=request.content
            )
            return Response(answer.status_code, headers=dict(answer.headers), content=answer.content)

        async def aclose(self) -> None:
            await self.http.aclose()

    forwarding = AsyncForwarding()

    async def main() -> list[Position]:
        async with AsyncClient(sandbox.url, TEST_API_KEY, strategy=DEMO_STRATEGY_ID, transport=forwarding) as client:
            return [p async for p in client.iter_positions(DEMO_WALLET, limit=3)]

    forwarded = asyncio.run(main())
    with Client(sandbox.url, TEST_API_KEY, strategy=DEMO_STRATEGY_ID) as direct:
        assert forwarded == list(direct.iter_positions(DEMO_WALLET, limit=3)) and len(forwarded) > 3
    assert forwarding.sent.count(f"/breeze-balances/{DEMO_WALLET}") == -(-len(forwarded) // 3)
    assert forwarding.http.is_closed  # closing the client closed the caller's transport
