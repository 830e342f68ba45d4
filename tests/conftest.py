"""Shared fixtures: every test gets its own HOME, config, data dir, keyring and environment; the sandbox
served over loopback (`serve_sandbox`, the `sandbox` fixture), a client that writes (`writing_client`, the
`wallet` fixture), and `yield` pointed at the sandbox's chain (`chain`, `chain_env`, `world`).

`run` runs a `yield` command line in the test's own process (tests/in_process.py), with the same
isolation and the same result (exit code, stdout, stderr) as the executable; a test that needs a
process of its own (signals, a terminal, a closed pipe, the quick exit, start-up time, variables only
a new interpreter reads) is marked `@pytest.mark.process`, or asks for `run_process`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from solders.keypair import Keypair

from tests.in_process import call_yield

YIELD = str(Path(sys.executable).with_name("yield"))
ROOT = Path(__file__).resolve().parent.parent
TEST_API_KEY = "test-key-5f1d0c9a7b3e4d2c"


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)

    def error_lines(self) -> list[str]:
        """stderr's lines for people. In JSON modes the last line is the error as one JSON object:
        checked here to carry the exit code and the message of the human line before it."""
        lines = self.stderr.strip().splitlines()
        if lines and lines[-1].startswith('{"error"'):
            error = json.loads(lines.pop())["error"]
            assert lines and error["code"] == self.code, self.stderr
            assert error["message"].replace("\n", " ") in lines[-1], self.stderr
        return lines


def write_keypair(path: Path, keypair: Keypair) -> str:
    """A keypair file as `solana-keygen` writes it (a JSON list of the 64 bytes), private to its owner."""
    path.write_text(json.dumps(list(bytes(keypair))))
    path.chmod(0o600)
    return str(path)


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """A clean environment: no YIELD_* variables, private HOME/XDG dirs, a stand-in keyring in them."""
    for name in list(os.environ):
        if name.startswith("YIELD_") or name in ("NO_COLOR", "FORCE_COLOR"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    # The stand-in OS keyring of tests/keyring_backend.py; `yield` runs import it through PYTHONPATH.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.keyring_backend.StandInKeyring")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    yield home
    from yieldcli import tokens

    tokens.forget_learned()  # tokens learned from one test's chain are not another's (in-process runs)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "process: the `run` fixture starts `yield` as a process of its own (signals, terminals, closed pipes, "
        "the quick exit, start-up time, variables only a new interpreter reads) instead of calling it in-process",
    )


def run_yield_process(args: tuple[str, ...], input: str | None, env: dict[str, str], timeout: float) -> Result:
    """The installed `yield` executable as a user runs it."""
    proc = subprocess.run(
        [YIELD, *args],
        input=input,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _runner(in_process: bool):
    def _run(*args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 60) -> Result:
        full_env = dict(os.environ)
        full_env.update(env or {})
        if in_process:
            result = call_yield(list(args), input=input, env=full_env, timeout=timeout)
        else:
            result = run_yield_process(args, input, full_env, timeout)
        if "--debug" not in args:
            assert "Traceback" not in result.stderr, result.stderr
        return result

    return _run


@pytest.fixture
def run(isolated, request):
    """Run `yield` as a user would, and check there is no traceback unless --debug: called in this
    process (tests/in_process.py) unless the test is marked `process`, then as the installed executable."""
    return _runner(in_process=request.node.get_closest_marker("process") is None)


@pytest.fixture
def run_process(isolated):
    """Run the installed `yield` executable as a process of its own, whatever the test's marks."""
    return _runner(in_process=False)


def serve_sandbox(folder: Path, **options):
    """The sandbox service served over real loopback HTTP from `folder`, with the known API key (unless
    `options` name another): the one way the tests start one. Stop it with `.stop()`."""
    from yieldcli.sandbox.server import SandboxServer

    return SandboxServer(folder / "state.json", **{"api_key": TEST_API_KEY, **options}).start()


@pytest.fixture
def sandbox(request, tmp_path):
    """The sandbox service served over real loopback HTTP, with a known API key. A test module asks for
    other settings with a marker: `pytestmark = pytest.mark.sandbox(seed_positions=120)`."""
    marker = request.node.get_closest_marker("sandbox")
    server = serve_sandbox(tmp_path / "served-sandbox", **(marker.kwargs if marker else {}))
    yield server
    server.stop()


@pytest.fixture
def api(sandbox, run):
    """`yield` pointed at the served sandbox with a valid key."""

    def _api(*args: str, **kwargs) -> Result:
        env = {"YIELD_API_URL": sandbox.url, "YIELD_API_KEY": TEST_API_KEY, **kwargs.pop("env", {})}
        return run(*args, env=env, **kwargs)

    return _api


@pytest.fixture
def sandbox_chain(tmp_path):
    """The sandbox's chain alone (LiteSVM runtime and its JSON-RPC over loopback): (runtime, server)."""
    from yieldcli.sandbox.rpc import RpcServer
    from yieldcli.sandbox.runtime import Runtime

    runtime = Runtime(tmp_path / "sandbox-chain" / "chain.json")
    server = RpcServer(runtime).start()
    yield runtime, server
    server.stop()


# ---- a client that writes --------------------------------------------------------------------------


def writing_client(sandbox, journal, *, asynchronous: bool = False, **settings):
    """A `Client` (an `AsyncClient` if `asynchronous`) that can write: the sandbox's service and RPC,
    signing as the demo wallet, its journal at `journal`; any of its settings replaced by `settings`."""
    from yieldcli import AsyncClient, Client
    from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair

    base = {
        "api_url": sandbox.url,
        "api_key": sandbox.api_key,
        "strategy": DEMO_STRATEGY_ID,
        "rpc_url": sandbox.rpc_url,
        "keypair": demo_keypair(),
        "journal_path": journal,
    }
    return (AsyncClient if asynchronous else Client)(**{**base, **settings})


@pytest.fixture
def journal(tmp_path):
    """Where a test's sent signatures are kept until settled."""
    return tmp_path / "in-flight.json"


@pytest.fixture
def wallet(sandbox, journal):
    """A client that can write: the sandbox's service and RPC, signing as the demo wallet."""
    with writing_client(sandbox, journal) as client:
        yield client


# ---- `yield` against the sandbox's chain -----------------------------------------------------------


def _chain_env(sandbox, keypair: str) -> dict[str, str]:
    from yieldcli.sandbox.demo import DEMO_STRATEGY_ID

    return {
        "YIELD_API_URL": sandbox.url,
        "YIELD_API_KEY": TEST_API_KEY,
        "YIELD_RPC_URL": sandbox.rpc_url,
        "YIELD_KEYPAIR": keypair,
        "YIELD_STRATEGY": DEMO_STRATEGY_ID,
    }


@pytest.fixture
def chain(sandbox, run, tmp_path):
    """`yield` pointed at the served sandbox's API and RPC, signing as the demo wallet."""
    from yieldcli.sandbox.demo import demo_keypair

    keypair = write_keypair(tmp_path / "demo.json", demo_keypair())

    def _yield(*args, env=None, **kwargs):
        return run(*args, env={**_chain_env(sandbox, keypair), **(env or {})}, **kwargs)

    _yield.keypair = keypair
    return _yield


@pytest.fixture
def chain_env(sandbox, tmp_path):
    """The environment `chain` gives `yield`, for commands started in the background."""
    from yieldcli.sandbox.demo import demo_keypair

    return {**os.environ, **_chain_env(sandbox, write_keypair(tmp_path / "bg-demo.json", demo_keypair()))}


@pytest.fixture
def world(sandbox, run, tmp_path):
    """The sandbox behind a stand-in service that rewrites the transactions it builds (tests/cli/stand_in.py)."""
    from tests.cli.stand_in import World

    w = World(sandbox, run, tmp_path)
    yield w
    w.stand_in.stop()


def usdc_position(chain) -> int:
    """The demo wallet's USDC position in base units, read through `yield positions`."""
    body = chain("positions", "--asset", "USDC", "-o", "json").json()
    return sum(p["total_position_value"] for p in body["data"])
