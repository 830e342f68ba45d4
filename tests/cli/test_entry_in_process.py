"""The in-process runner (tests/in_process.py) gives what the `yield` executable gives for what the tests
check (exit code, stdout, stderr, no traceback), and leaves nothing of a run behind for the next."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import TEST_API_KEY
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET

# (arguments, standard input, variables): reads, writes of settings, errors of each kind, help, version,
# completion, standard input, the machine formats; what none of them prints is a time or a port.
SAMPLE = [
    (("--version",), None, {}),
    (("--help",), None, {}),
    (("deposit", "--help"), None, {}),
    (("config", "trust", "--help"), None, {}),
    (("config", "show", "-o", "json"), None, {}),
    (("config", "get", "strategy"), None, {}),
    (("config", "set", "output", "csv"), None, {}),
    (("config", "set", "timeout", "-5"), None, {}),
    (("balances", "--bogus"), None, {}),
    (("positions", "--limit", "x", DEMO_WALLET), None, {}),
    (("nosuchcommand",), None, {}),
    (("positions", DEMO_WALLET, "-o", "json"), None, {"YIELD_API_KEY": ""}),
    (("strategy", "info", "-o", "json"), None, {"YIELD_STRATEGY": DEMO_STRATEGY_ID}),
    (("positions", DEMO_WALLET, "-o", "csv"), None, {}),
    (("balances", DEMO_WALLET, "-o", "ndjson"), None, {}),
    (("positions", DEMO_WALLET, "--jq", ".data[0].strategy_id"), None, {}),
    (("positions", "--wallets-file", "stdin:", "-o", "json"), f"{DEMO_WALLET}\n", {}),
    (("strategy", "info", "-o", "json"), None, {"YIELD_STRATEGY": "00000000-0000-4000-8000-000000000000"}),
    (("health", "-o", "json"), None, {"YIELD_API_KEY": "wrong-key-0123456789"}),
    (("--api-url", "SANDBOX/v1", "health", "-o", "json"), None, {}),  # the service's 404: exit 5
    (("auth", "status", "-o", "json"), None, {}),
    (("deposit", "--asset", "USDC", "--amount", "1.5.0"), None, {}),
    (("withdraw", "--asset", "USDC", "--amount", "1", "--send"), None, {}),
    ((), None, {"_YIELD_COMPLETE": "complete_bash", "COMP_WORDS": "yield con", "COMP_CWORD": "1"}),
]


@pytest.mark.parametrize(("args", "stdin", "env"), SAMPLE, ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_in_process_gives_what_the_process_gives(args, stdin, env, sandbox, run, run_process):
    served = {"YIELD_API_URL": sandbox.url, "YIELD_API_KEY": TEST_API_KEY, **env}
    args = _served(args, sandbox)
    there = run_process(*args, input=stdin, env=served)
    # The config file a `config set` wrote is the process's: the in-process run starts from the same.
    config = os.path.join(os.environ["XDG_CONFIG_HOME"], "yield", "config.toml")
    if os.path.exists(config):
        os.remove(config)
    here = run(*args, input=stdin, env=served)
    assert (here.code, here.stdout, here.stderr) == (there.code, there.stdout, there.stderr)
    assert "Traceback" not in here.stderr


def _served(args: tuple[str, ...], sandbox) -> tuple[str, ...]:
    return tuple(a.replace("SANDBOX", sandbox.url) for a in args)


def test_the_sample_covers_success_and_each_kind_of_failure(sandbox, run_process):
    codes = set()
    for args, stdin, env in SAMPLE:
        codes.add(
            run_process(
                *_served(args, sandbox),
                input=stdin,
                env={"YIELD_API_URL": sandbox.url, "YIELD_API_KEY": TEST_API_KEY, **env},
            ).code
        )
    assert {0, 2, 3, 4, 5} <= codes, codes


def test_a_run_leaves_nothing_behind(run):
    environ, handlers = dict(os.environ), {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    threads = set(threading.enumerate())
    result = run("--sandbox", "positions", "-o", "json", env={"YIELD_OUTPUT": "csv"})
    assert result.code == 0, result.stderr
    assert dict(os.environ) == environ  # YIELD_OUTPUT was the run's only
    assert {s: signal.getsignal(s) for s in handlers} == handlers
    assert set(threading.enumerate()) <= threads  # the embedded sandbox was stopped
    # The next run reads its own environment: the variable of the last one is gone.
    assert run("config", "get", "output").code == 3


def test_each_run_chooses_its_keyring(run):
    # keyring picks its backend once per process; the runner has it pick again for each command line.
    refused = run(
        "auth",
        "login",
        "--with-token",
        input="key-0123456789abcdef\n",
        env={"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
    )
    assert refused.code == 3, refused.stderr
    stored = run("auth", "login", "--with-token", input="key-0123456789abcdef\n")
    assert stored.code == 0, stored.stderr
    assert run("auth", "status", "-o", "json").json()["source"] == "keyring"


def test_an_error_before_the_root_command_knows_no_session_of_an_earlier_run(run, sandbox):
    # A run that made a session (JSON output), then one that fails before making its own: its error
    # is drawn for its own output mode (a table: no JSON line), not the earlier run's.
    assert run("--sandbox", "positions", "-o", "json").code == 0
    bad = run("--bogus", env={"YIELD_OUTPUT": "table"})
    assert bad.code == 2 and '{"error"' not in bad.stderr, bad.stderr


def test_what_only_a_new_interpreter_reads_is_refused(run):
    with pytest.raises(pytest.fail.Exception, match="PYTHONIOENCODING.*mark the test @pytest.mark.process"):
        run("--version", env={"PYTHONIOENCODING": "ascii"})


@pytest.mark.process
def test_the_process_mark_runs_the_executable(run):
    # Only an interpreter of its own reads PYTHONIOENCODING at its start: the error line is escaped.
    result = run("config", "get", "é", env={"PYTHONIOENCODING": "ascii"})
    assert result.code == 2 and "unknown setting '\\xe9'" in result.stderr, result.stderr


def test_a_command_past_its_timeout_is_stopped_as_a_process_is(run):
    # A service that takes the connection and never answers: the run's timeout ends the command.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            run("health", env={"YIELD_API_URL": url, "YIELD_API_KEY": TEST_API_KEY}, timeout=1)
        assert time.monotonic() - started < 10
    assert run("--version").code == 0  # and the next run starts clean


def test_the_tests_own_threads_write_beside_the_command(run):
    # A server of the test's writes on stderr while the command runs: not the command's stderr, as
    # beside a process (its request threads are started by the server's thread, not by the command).
    asked = []

    class Noisy(BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            sys.stderr.write("the test's server speaks\n")
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Noisy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        result = run("health", "-o", "json", env={"YIELD_API_URL": url, "YIELD_API_KEY": TEST_API_KEY})
    finally:
        server.shutdown()
        server.server_close()
    assert asked and result.code != 0
    assert "the test's server speaks" not in result.stderr and result.stderr.startswith("error:"), result.stderr
