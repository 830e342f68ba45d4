"""Shared fixtures: every test gets its own HOME, config, data dir, keyring and environment.

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
    return home


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


@pytest.fixture
def sandbox(tmp_path):
    """The sandbox service served over real loopback HTTP, with a known API key."""
    from yieldcli.sandbox.server import SandboxServer

    server = SandboxServer(tmp_path / "served-sandbox" / "state.json", api_key=TEST_API_KEY).start()
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
