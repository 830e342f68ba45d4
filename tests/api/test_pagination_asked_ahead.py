"""Every page (`--all`, streams, the Client's iterators): the second page is asked with the first, the
rest once the first has said how many there are, and a page asked past the last is never read,
whatever it answers. Against the sandbox behind a recording front on loopback that answers 500 to
any page past the last (a stricter service than the sandbox, which answers an empty page)."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import TEST_API_KEY
from yieldcli import Client
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET


class StrictFront:
    """Forwards every GET to the sandbox and records it (page asked, when asked, when answered); a page
    past the last is answered 500 instead of the sandbox's empty page."""

    def __init__(self, upstream: str):
        self.log: list[dict[str, float | int]] = []
        self._lock = threading.Lock()
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
                pass

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                asked = time.monotonic()
                request = urllib.request.Request(upstream + self.path, headers={"x-api-key": TEST_API_KEY})
                with urllib.request.urlopen(request) as answer:
                    body = answer.read()
                page = int(parse_qs(urlsplit(self.path).query).get("page", ["1"])[0])
                status = 200
                meta = json.loads(body).get("meta") or {}
                if page > max(meta.get("total_pages", 1), 1):
                    status, body = 500, b'{"message": "page out of range"}'
                time.sleep(0.02)  # a little latency, so the order of asks and answers is clear
                with front._lock:  # before the answer: a client that dropped it may have gone already
                    front.log.append({"page": page, "asked": asked, "answered": time.monotonic(), "status": status})
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def pages(self) -> list[int]:
        return sorted(int(entry["page"]) for entry in self.log)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def front(sandbox):
    server = StrictFront(sandbox.url)
    yield server
    server.stop()


def _balances(run, front, *flags: str):
    return run("balances", DEMO_WALLET, *flags, env={"YIELD_API_URL": front.url, "YIELD_API_KEY": TEST_API_KEY})


def test_a_list_of_one_page_is_whole_and_the_page_asked_past_it_is_never_read(run, front):
    listed = _balances(run, front, "--all", "-o", "ndjson")  # 15 balances: one page of 100
    assert listed.code == 0 and listed.stderr == ""
    assert len(listed.stdout.splitlines()) == 15
    # Page 2 was asked with the first: its request may reach the front just after the command has
    # written everything and closed the fan-out (an in-process run ends sooner than a process).
    deadline = time.monotonic() + 5
    while front.pages() != [1, 2] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert front.pages() == [1, 2]  # its 500 was dropped, not retried
    assert [e["status"] for e in front.log if e["page"] == 2] == [500]


def test_many_pages_come_whole_in_order_and_the_rest_wait_for_the_first_answer(run, front):
    listed = _balances(run, front, "--all", "--limit", "3", "-o", "ndjson")  # 5 pages of 3
    log = list(front.log)
    whole = _balances(run, front, "--all", "-o", "json").json()["data"]
    assert listed.code == 0 and listed.stderr == ""
    assert [json.loads(line) for line in listed.stdout.splitlines()] == whole
    assert sorted(int(e["page"]) for e in log) == [1, 2, 3, 4, 5]  # each asked once, none past the last
    first = next(e for e in log if e["page"] == 1)
    assert all(e["asked"] < first["answered"] for e in log if e["page"] == 2)  # asked with the first
    assert all(e["asked"] >= first["answered"] for e in log if int(e["page"]) >= 3)  # once it said 5


def test_the_client_iterates_every_page_the_same_way(front):
    with Client(front.url, TEST_API_KEY, strategy=DEMO_STRATEGY_ID) as client:
        one_page = list(client.iter_balances(DEMO_WALLET))
        many = list(client.iter_balances(DEMO_WALLET, limit=4))  # 4 pages
    assert len(one_page) == 15 and many == one_page
    assert sorted(int(e["page"]) for e in front.log) == [1, 1, 2, 2, 3, 4]
