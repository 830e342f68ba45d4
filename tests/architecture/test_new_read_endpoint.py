"""A new read endpoint touches at most four files: its row (api/endpoints.py), its model (api/models.py),
its read (client/clients.py: one line for `Client` and `AsyncClient` alike) and its resource
(cli/resources.py: CSV columns, table, and the command made from it).

Proved on a copy of the package: a throwaway endpoint is added by editing those four files only, the
service side of it is served on loopback, and it is read through `yield rewards` (table and JSON,
one page and every page), `Client` and `AsyncClient`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from filecmp import cmp
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

import yieldcli
from tests.conftest import TEST_API_KEY
from yieldcli.sandbox.demo import DEMO_WALLET

# The whole change, file by file: (anchor in the file, text put before it; None: appended at the end).
EDITS: dict[str, list[tuple[str | None, str]]] = {
    "api/endpoints.py": [
        (None, '    rewards = Endpoint("/user-rewards/{wallet}", arguments=("wallet",), query=PAGING)\n'),
    ],
    "api/models.py": [
        (
            None,
            """

class Reward(NamedTuple):
    fund_id: str
    reward: int


def reward(item: dict[str, Any], index: int | None = None) -> Reward:
    where = _where("reward", index)
    return Reward(text(item, "fund_id", where), integer(item, "reward", where))
""",
        ),
    ],
    "client/clients.py": [
        (
            "class Reads:",
            '''def _iter_rewards(defaults: ReadDefaults, wallet: str, *, limit: int | None = None) -> Ask:
    """Every reward of the wallet."""
    return Ask(Endpoints.rewards, (wallet,), {"limit": limit})


''',
        ),
        (
            "\n\nclass _Construction:",
            '    iter_rewards = Listing("rewards", _iter_rewards, models.reward)\n',
        ),
    ],
    "cli/resources.py": [
        (
            '        Resource(\n            "strategy",',
            """        Resource(
            "rewards",
            "reward",
            ("fund_id", "reward"),
            PageTable(
                "Rewards",
                "rewards",
                (Cell("Fund", "fund_id"), Cell("Reward", lambda r: str(r.reward))),
                token=lambda r: r.fund_id,
                decimals=lambda r: None,
            ),
            command="Show a wallet's rewards.",
        ),
""",
        ),
    ],
}

REWARDS = [{"fund_id": f"fund-{n}", "reward": 10 * n} for n in range(1, 6)]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package with the throwaway endpoint added; the folder to put on PYTHONPATH."""
    original = Path(yieldcli.__file__).parent
    root = tmp_path_factory.mktemp("edited")
    copy = root / "yieldcli"
    shutil.copytree(original, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for name, edits in EDITS.items():
        path = copy / name
        text = path.read_text()
        for anchor, added in edits:
            if anchor is None:
                text += added
            else:
                assert text.count(anchor) == 1, f"{name}: the anchor {anchor!r} moved"
                text = text.replace(anchor, added + anchor)
        path.write_text(text)
    return root


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    """The new endpoint's service side, on loopback: pages of REWARDS, the API key checked."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            if self.headers.get("x-api-key") != TEST_API_KEY:
                return self._answer(401, {"message": "API key invalid or doesn't exist"})
            if parts.path != f"/user-rewards/{DEMO_WALLET}":
                return self._answer(404, {"message": "not found"})
            page, size = int(query.get("page", 1)), int(query.get("limit", 2))
            pages = -(-len(REWARDS) // size)
            meta = {
                "has_more": page < pages,
                "page": page,
                "per_page": size,
                "total": len(REWARDS),
                "total_pages": pages,
            }
            return self._answer(200, {"data": REWARDS[(page - 1) * size : page * size], "meta": meta})

        def _answer(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def edited(package: Path, service: str) -> dict[str, str]:
    """The environment of a run of the edited package against the service."""
    return {
        "PYTHONPATH": os.pathsep.join([str(package), os.environ["PYTHONPATH"]]),
        "YIELD_API_URL": service,
        "YIELD_API_KEY": TEST_API_KEY,
    }


def test_the_change_touches_four_files(package: Path) -> None:
    original = Path(yieldcli.__file__).parent
    changed = sorted(
        str(path.relative_to(original))
        for path in original.rglob("*.py")
        if not cmp(path, package / "yieldcli" / path.relative_to(original), shallow=False)
    )
    assert changed == sorted(EDITS) and len(changed) <= 4


@pytest.mark.process
def test_yield_reads_it_as_a_table_and_as_json(run, edited: dict[str, str]) -> None:
    table = run("rewards", DEMO_WALLET, "-o", "table", env=edited)
    assert table.code == 0, table.stderr
    assert "Rewards" in table.stdout and "fund-1" in table.stdout and "fund-3" not in table.stdout
    assert "--all gets every page" in table.stderr  # the first page of three: the rest is one flag away

    one = run("rewards", DEMO_WALLET, "-o", "json", env=edited)
    assert one.code == 0, one.stderr
    assert json.loads(one.stdout) == {
        "data": REWARDS[:2],
        "meta": {"has_more": True, "page": 1, "per_page": 2, "total": 5, "total_pages": 3},
    }
    every = run("rewards", DEMO_WALLET, "--all", "--limit", "2", "-o", "json", env=edited)
    assert every.code == 0, every.stderr
    assert json.loads(every.stdout)["data"] == REWARDS

    helped = run("--help", env=edited)
    assert "  rewards        Show a wallet's rewards\n" in helped.stdout


def test_client_and_async_client_read_it(package: Path, edited: dict[str, str]) -> None:
    script = """
import asyncio, json, sys
from yieldcli import AsyncClient, Client

url, key, wallet = sys.argv[1:]
with Client(url, key) as client:
    blocking = [[r.fund_id, r.reward] for r in client.iter_rewards(wallet, limit=2)]

async def main():
    async with AsyncClient(url, key) as client:
        return [[r.fund_id, r.reward] async for r in client.iter_rewards(wallet, limit=2)]

print(json.dumps({"sync": blocking, "async": asyncio.run(main())}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script, edited["YIELD_API_URL"], TEST_API_KEY, DEMO_WALLET],
        env={**os.environ, **edited},
        cwd=package,  # `python -c` looks in its working directory first
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    expected = [[r["fund_id"], r["reward"]] for r in REWARDS]
    assert json.loads(done.stdout) == {"sync": expected, "async": expected}
    assert done.stderr == ""
