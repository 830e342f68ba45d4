"""The standard-library transport: a bounded pool that keeps few idle connections after a burst."""

from __future__ import annotations

import select
import threading

import pytest

from tests.api.test_fanout import Scripted
from tests.conftest import TEST_API_KEY
from yieldcli.api.transport import Transport

# The sandbox these tests were written against: enough positions for many pages.
pytestmark = pytest.mark.sandbox(seed_positions=120)


def test_after_a_burst_at_most_max_idle_connections_stay_open(sandbox):
    sandbox.latency_ms = 200  # every request holds its connection a while: the eight overlap
    transport = Transport(sandbox.url, timeout=10, max_connections=8, max_idle=2)
    barrier = threading.Barrier(8)
    statuses: list[int] = []

    def read() -> None:
        barrier.wait()  # all eight at once: eight connections
        statuses.append(transport.request("GET", "/health", {"x-api-key": TEST_API_KEY}).status)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 8
    sandbox.latency_ms = 0
    assert transport._idle.qsize() == 2
    # The kept ones still work.
    assert transport.request("GET", "/health", {"x-api-key": TEST_API_KEY}).status == 200
    transport.close()
    assert transport._idle.qsize() == 0


def test_a_post_after_the_server_closed_an_idle_connection_goes_on_a_new_one():
    # A script that waits between two writes: the service closed the kept connection meanwhile. A POST
    # is never sent twice, so the dropped connection must be found before the request is written.
    server = Scripted(drop_after_answer=True)
    try:
        transport = Transport(server.url, timeout=10)
        assert transport.request("GET", "/length/1", {}).status == 200
        (kept,) = transport._idle.queue
        select.select([kept.sock], [], [], 5)  # until the server's close has arrived
        answer = transport.request("POST", "/length/2", {"content-type": "application/json"}, b"{}")
        assert answer.status == 200 and server.connections == 2
    finally:
        server.close()
