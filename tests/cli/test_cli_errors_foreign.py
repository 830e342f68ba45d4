"""The one place errors become exits: exceptions that are not ours but have a documented meaning."""

import errno

from yieldcli.cli.cli_errors import describe_any, describe_exception
from yieldcli.errors import ExitCode, NetworkError


def test_a_task_group_wrapping_one_of_our_errors_exits_with_its_code():
    # solana-py's transport runs in an anyio task group: what a task raised arrives wrapped.
    wrapped = ExceptionGroup(
        "unhandled errors in a TaskGroup", [ExceptionGroup("inner", [NetworkError("cannot connect", hint="h")])]
    )
    assert describe_exception(wrapped) == (ExitCode.NETWORK, "network", "cannot connect", "h", None)


def test_a_task_group_of_several_errors_or_an_unknown_one_stays_a_bug():
    assert describe_exception(ExceptionGroup("two", [NetworkError("a"), NetworkError("b")])) is None
    assert describe_exception(ExceptionGroup("one", [ZeroDivisionError()])) is None
    assert describe_exception(ValueError("anything")) is None
    bug = describe_any(ValueError("anything"))
    assert bug.code == ExitCode.UNEXPECTED and bug.kind == "bug" and "ValueError: anything" in bug.message


def test_a_port_in_use_is_a_usage_error_with_a_hint():
    code, kind, message, hint, _ = describe_exception(OSError(errno.EADDRINUSE, "Address already in use"))
    assert code == ExitCode.USAGE and "already in use" in message and "--port" in hint
