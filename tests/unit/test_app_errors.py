"""The one place errors become exits: exceptions that are not ours but have a documented meaning."""

import errno

from yieldcli.app import _known_failure
from yieldcli.errors import ExitCode, NetworkError


def test_a_task_group_wrapping_one_of_our_errors_exits_with_its_code():
    # solana-py's transport runs in an anyio task group: what a task raised arrives wrapped.
    wrapped = ExceptionGroup("unhandled errors in a TaskGroup", [ExceptionGroup("inner", [NetworkError("cannot connect", hint="h")])])
    assert _known_failure(wrapped) == (ExitCode.NETWORK, "cannot connect", "h")


def test_a_task_group_of_several_errors_or_an_unknown_one_stays_a_bug():
    assert _known_failure(ExceptionGroup("two", [NetworkError("a"), NetworkError("b")])) is None
    assert _known_failure(ExceptionGroup("one", [ZeroDivisionError()])) is None
    assert _known_failure(ValueError("anything")) is None


def test_a_port_in_use_is_a_usage_error_with_a_hint():
    code, message, hint = _known_failure(OSError(errno.EADDRINUSE, "Address already in use"))
    assert code == ExitCode.USAGE and "already in use" in message and "--port" in hint
