"""What the command line draws, from Python: a listing as raw and typed items with its meta, one page
or every page with progress; one listing for many wallets, a failing wallet kept apart."""

from __future__ import annotations

import pytest

from tests.conftest import TEST_API_KEY
from yieldcli import Client, Position, ServiceError
from yieldcli.api import models
from yieldcli.api.pagination import PageResult
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)

NOT_A_WALLET = "not-a-wallet"  # the service refuses it (HTTP 400)


@pytest.fixture
def client(sandbox):
    with Client(sandbox.url, TEST_API_KEY, strategy=DEMO_STRATEGY_ID) as c:
        yield c


def test_one_page_gives_raw_and_typed_items_and_the_services_meta(client):
    result = client.page_result("positions", DEMO_WALLET, page=2, limit=7)
    entries = list(result.entries)
    typed = client.positions(DEMO_WALLET, page=2, limit=7)
    assert [model for _, model in entries] == typed.items
    assert all(isinstance(raw, dict) and raw["fund_id"] == model.fund_id for raw, model in entries)
    assert result.meta() == typed.meta.to_dict() and result.more_pages == typed.meta.to_dict()


def test_every_page_streams_in_order_with_progress_and_the_whole_sets_meta(client):
    seen: list[tuple[int, int]] = []
    result = client.page_result("positions", DEMO_WALLET, every=True, limit=25, progress=lambda *p: seen.append(p))
    models = [model for _, model in result.entries]
    assert models == list(client.iter_positions(DEMO_WALLET, limit=25))
    assert all(isinstance(m, Position) for m in models) and len(models) > 25
    assert seen[-1][0] == seen[-1][1] > 1  # every page counted, the last one too
    assert result.meta() == {
        "has_more": False,
        "page": 1,
        "per_page": len(models),
        "total": len(models),
        "total_pages": 1,
    }


def test_many_wallets_come_back_in_order_and_a_failing_one_does_not_stop_the_others(client):
    done: list[tuple[int, int]] = []
    wallets = [DEMO_WALLET, NOT_A_WALLET, DEMO_WALLET]
    results = list(client.each_wallet("balances", wallets, limit=3, progress=lambda *p: done.append(p)))
    assert [wallet for wallet, _ in results] == wallets
    first, refused, last = (result for _, result in results)
    assert isinstance(first, PageResult) and isinstance(last, PageResult)
    assert isinstance(refused, ServiceError) and "Invalid wallet address" in refused.message
    assert [m for _, m in first.entries] == client.balances(DEMO_WALLET, limit=3).items
    assert sorted(done) == [(1, 3), (2, 3), (3, 3)]


def test_the_raw_answer_of_a_read_and_an_unknown_read(client):
    body = client.answer("strategy", DEMO_STRATEGY_ID)
    assert isinstance(body, dict) and models.strategy(body) == client.strategy()
    assert "status_per_asset" in body  # as the service sent it: fields the model leaves out are there
    assert client.answer("health") == client.health()
    with pytest.raises(TypeError, match="no listing 'nothing'"):
        client.page_result("nothing", DEMO_WALLET)
    with pytest.raises(ServiceError):
        client.answer("strategy", "no-such-strategy")
