"""A stderr that fails with ENOSPC (`yield ... 2>/dev/full`) is treated as a closed one: `yield` run as a
process of its own against the sandbox served over loopback keeps its exit code and its stdout, and
writes no traceback anywhere."""

import errno
import io
import json
import subprocess

import pytest

from tests.conftest import YIELD
from yieldcli.cli.closed_stderr import sturdy

DEPOSIT = ("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")


def _full_stderr(env, *args, timeout=120):
    """`yield ARGS 2>/dev/full`: its exit code and stdout."""
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [YIELD, *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=full,
            text=True,
            timeout=timeout,
        )
    return done.returncode, done.stdout


def test_a_deposit_that_fails_on_chain_keeps_exit_7_and_its_result(chain_env, sandbox):
    sandbox.runtime.set_fault("fail", count=1)
    code, stdout = _full_stderr(chain_env, *DEPOSIT)
    assert code == 7, stdout
    body = json.loads(stdout)
    assert body["status"] == "failed" and body["signature"]


def test_a_deposit_with_its_log_on_a_full_stderr_lands_and_says_so(chain_env, sandbox):
    code, stdout = _full_stderr(chain_env, "-v", *DEPOSIT)
    assert code == 0, stdout
    assert json.loads(stdout)["status"] == "confirmed"


def test_a_usage_error_keeps_exit_2(chain_env):
    assert _full_stderr(chain_env, "tx", "status", "not-a-signature")[0] == 2


class _Full(io.StringIO):
    def write(self, text):
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_write_that_fails_for_another_reason_still_raises():
    class _Bad(io.StringIO):
        def write(self, text):
            raise OSError(errno.EBADF, "Bad file descriptor")

    with pytest.raises(OSError):
        sturdy(_Bad()).write("x")


def test_once_full_every_write_goes_nowhere():
    stream = sturdy(_Full())
    assert stream.write("warning: …\n") == len("warning: …\n")
    stream.flush()
    assert stream.lost
