"""Reading the service from Python: typed results, every page in order, exact amounts, clear errors."""

from __future__ import annotations

import asyncio
import re
from decimal import Decimal

import pytest

from tests.conftest import TEST_API_KEY
from yieldcli import (
    AsyncClient,
    AuthError,
    Balance,
    Client,
    NetworkError,
    Page,
    Position,
    ServiceError,
    Strategy,
    UsageError,
    YieldRecord,
)
from yieldcli.api.core import RetryPolicy
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)


@pytest.fixture
def client(sandbox):
    with Client(sandbox.url, TEST_API_KEY, strategy=DEMO_STRATEGY_ID) as c:
        yield c


def every_page_one_by_one(client, read, **query):
    items, page = [], 1
    while True:
        result = read(DEMO_WALLET, page=page, limit=7, **query)
        items.extend(result.items)
        if not result.meta.has_more:
            return items
        page += 1


def test_a_strategy_reads_as_a_typed_strategy(client):
    strategy = client.strategy()
    assert isinstance(strategy, Strategy) and strategy.strategy_id == DEMO_STRATEGY_ID
    assert strategy.assets and all(isinstance(a, str) for a in strategy.assets)


def test_a_page_of_positions_is_typed_with_exact_amounts(client):
    page = client.positions(DEMO_WALLET, limit=5)
    assert isinstance(page, Page) and len(page.items) == 5 and page.meta.has_more
    for position in page.items:
        assert isinstance(position, Position) and type(position.total_position_value) is int
        value = position.total_position_value_decimal
        assert isinstance(value, Decimal)
        assert value == Decimal(position.total_position_value) / 10**position.decimals
        assert value.scaleb(position.decimals) == position.total_position_value  # nothing rounded
        assert position.yield_earned_decimal == Decimal(position.yield_earned).scaleb(-position.decimals)


def test_iter_positions_yields_every_page_in_order(client):
    expected = every_page_one_by_one(client, client.positions)
    assert len(expected) > 100
    assert list(client.iter_positions(DEMO_WALLET, limit=7)) == expected


def test_iter_balances_and_iter_earnings_yield_every_page_in_order(client):
    balances = every_page_one_by_one(client, client.balances)
    assert list(client.iter_balances(DEMO_WALLET, limit=7)) == balances
    assert all(isinstance(b, Balance) for b in balances)
    earnings = every_page_one_by_one(client, client.earnings)
    assert list(client.iter_earnings(DEMO_WALLET, limit=7)) == earnings and len(earnings) > 7
    assert all(isinstance(e, YieldRecord) for e in earnings)


def test_balances_split_into_wallet_and_position_parts_exactly(client):
    for balance in client.iter_balances(DEMO_WALLET):
        assert balance.total_balance_decimal == Decimal(balance.total_balance).scaleb(-balance.decimals)
        if balance.funds is None:
            assert balance.funds_decimal is None
        else:
            assert balance.wallet_part_decimal + balance.funds_decimal == balance.total_balance_decimal


def test_a_zero_amount_prints_as_0(client):
    """The demo wallet holds none of USDS outside its position: 0, not `0E-6`, in print and f-strings."""
    usds = next(b for b in client.iter_balances(DEMO_WALLET) if b.token_symbol == "USDS")
    assert usds.wallet_part == 0 and usds.wallet_part_decimal == 0
    assert str(usds.wallet_part_decimal) == "0" and f"{usds.wallet_part_decimal}" == "0"


def test_earnings_give_token_units_only_for_known_tokens(client):
    records = list(client.iter_earnings(DEMO_WALLET))
    usdc = [r for r in records if r.base_asset == "USDC"]
    assert usdc and all(r.position_value_decimal == Decimal(r.position_value).scaleb(-6) for r in usdc)
    unknown = records[0]._replace(base_asset="NOT-A-TOKEN")
    assert unknown.decimals is None and unknown.position_value_decimal is None


def test_the_async_client_reads_the_same_as_the_sync_client(sandbox, client):
    async def read():
        async with AsyncClient(sandbox.url, TEST_API_KEY, strategy=DEMO_STRATEGY_ID, concurrency=4) as aclient:
            return (
                await aclient.strategy(),
                await aclient.positions(DEMO_WALLET, limit=5),
                [p async for p in aclient.iter_positions(DEMO_WALLET, limit=7)],
                [b async for b in aclient.iter_balances(DEMO_WALLET, limit=3)],
                [e async for e in aclient.iter_earnings(DEMO_WALLET, limit=9)],
                await aclient.health(),
            )

    strategy, page, positions, balances, earnings, health = asyncio.run(read())
    assert strategy == client.strategy() and page == client.positions(DEMO_WALLET, limit=5)
    assert positions == list(client.iter_positions(DEMO_WALLET))
    assert balances == list(client.iter_balances(DEMO_WALLET))
    assert earnings == list(client.iter_earnings(DEMO_WALLET))
    assert health == "OK"


def test_a_failing_page_names_itself_and_nothing_partial_passes_as_whole(sandbox, client):
    items = client.iter_positions(DEMO_WALLET, limit=7)
    first = next(items)  # page 1 arrived; every later page fails
    sandbox.add_fault("GET", r"^/breeze-balances/", 500, '{"message":"Internal server error"}', times=None)
    with pytest.raises(ServiceError) as info:
        list(items)
    assert isinstance(first, Position)
    assert info.value.kind == "service.status"
    # Pages read ahead before the fault came whole; the first page asked after it names itself.
    named = re.fullmatch(r"positions page (\d+) of (\d+): Internal server error", info.value.message)
    assert named and 1 < int(named[1]) <= int(named[2]), info.value.message


def test_the_async_iterator_names_the_failing_page_too(sandbox):
    async def read():
        async with AsyncClient(sandbox.url, TEST_API_KEY, strategy=DEMO_STRATEGY_ID) as aclient:
            items = aclient.iter_positions(DEMO_WALLET, limit=7)
            first = await items.__anext__()
            sandbox.add_fault("GET", r"^/breeze-balances/", 200, '{"data": {}, "meta": {}}', times=None)
            return first, [p async for p in items]

    with pytest.raises(ServiceError) as info:
        asyncio.run(read())
    assert info.value.kind == "service.body" and "positions page 2 of" in info.value.message


def test_answers_the_service_may_give_are_errors_with_a_kind_and_no_command_line_words(sandbox):
    cases = []
    with Client(sandbox.url, None) as anonymous:
        with pytest.raises(AuthError) as missing:
            anonymous.strategy(DEMO_STRATEGY_ID)
        cases.append((missing.value, "auth.missing_key"))
    with Client(sandbox.url, "wrong-key-0123456789") as wrong:
        with pytest.raises(AuthError) as rejected:
            wrong.health()
        cases.append((rejected.value, "auth.rejected"))
    with Client(sandbox.url, TEST_API_KEY) as client:
        sandbox.add_fault("GET", "/health", 301, headers={"location": "https://elsewhere.example/"})
        with pytest.raises(ServiceError) as redirect:
            client.health()
        cases.append((redirect.value, "service.redirect"))
        sandbox.add_fault("GET", "/health", 200, "<html>maintenance</html>", content_type="text/html")
        with pytest.raises(ServiceError) as body:
            client.health()
        cases.append((body.value, "service.body"))
        with pytest.raises(ServiceError) as unknown:
            client.strategy("no-such-strategy")
        cases.append((unknown.value, "service.status"))
    with Client("http://127.0.0.1:9", TEST_API_KEY) as nowhere:
        nowhere._api._core._retry = RetryPolicy(attempts=1)
        with pytest.raises(NetworkError) as unreachable:
            nowhere.health()
        cases.append((unreachable.value, "network.unreachable"))
    for error, kind in cases:
        assert error.kind == kind, error
        assert error.hint is None, error
        assert "--" not in error.message and "yield " not in error.message, error


def test_busy_answers_are_retried_after_what_retry_after_says(sandbox):
    waits: list[float] = []
    from yieldcli.api.sync import ServiceClient

    with ServiceClient(sandbox.url, TEST_API_KEY, sleep=waits.append) as api:
        sandbox.add_fault("GET", "/health", 503, headers={"retry-after": "2"}, times=2)
        assert api.health() == "OK"
    assert waits == [2.0, 2.0]


def test_the_async_client_retries_the_same_way(sandbox):
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def read():
        from yieldcli.api.aio import AsyncServiceClient

        async with AsyncServiceClient(sandbox.url, TEST_API_KEY, sleep=sleep) as api:
            return await api.health()

    sandbox.add_fault("GET", "/health", 429, headers={"retry-after": "3"}, times=1)
    assert asyncio.run(read()) == "OK" and waits == [3.0]


def test_bad_arguments_are_refused_before_any_request(sandbox):
    with Client(sandbox.url, TEST_API_KEY) as client:
        with pytest.raises(UsageError):
            client.positions(DEMO_WALLET)  # no strategy given, none by default
        with pytest.raises(UsageError):
            client.positions(DEMO_WALLET, DEMO_STRATEGY_ID, order="sideways")
    with pytest.raises(UsageError):
        Client("http://api.example.com", TEST_API_KEY)  # the key would travel in clear


def test_from_profile_reads_the_settings_the_command_line_uses(sandbox, isolated, monkeypatch):
    config = isolated / ".config" / "yield" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[profiles.work]\napi_url = "{sandbox.url}"\nstrategy = "{DEMO_STRATEGY_ID}"\ntimeout = "7"\n')
    monkeypatch.setenv("YIELD_API_KEY", TEST_API_KEY)
    with Client.from_profile("work") as client:
        assert client.api_url == sandbox.url
        assert client.strategy().strategy_id == DEMO_STRATEGY_ID
    monkeypatch.setenv("YIELD_PROFILE", "work")
    monkeypatch.setenv("YIELD_API_URL", "https://env.example")
    with Client.from_profile() as client:
        assert client.api_url == "https://env.example"  # environment beats the profile, as for `yield`
    from yieldcli.client.clients import load_profile

    assert TEST_API_KEY not in repr(load_profile())


@pytest.mark.parametrize("decimals", ["-1", "256", "1000000000"])
def test_decimals_no_token_can_have_are_a_body_error(sandbox, client, decimals):
    body = (
        '{"data": [{"token_address": "x", "decimals": ' + decimals + ', "total_balance": 1}], '
        '"meta": {"has_more": false, "page": 1, "per_page": 10, "total": 1, "total_pages": 1}}'
    )
    sandbox.add_fault("GET", "^/user-balances/", 200, body)
    with pytest.raises(ServiceError) as info:
        client.balances(DEMO_WALLET)
    assert info.value.kind == "service.body" and f"decimals={decimals}" in info.value.message
