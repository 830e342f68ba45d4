"""The command line's table: every kind the library raises gets the hint a `yield` user needs."""

from __future__ import annotations

import json

import pytest

from yieldcli.cli.cli_errors import HINTS, LOGIN_HINT, describe, hint_for
from yieldcli.errors import AuthError, ExitCode, NetworkError, ServiceError, UsageError, YieldError

LIBRARY_KINDS = [
    "auth.missing_key",
    "auth.rejected",
    "network.timeout",
    "network.unreachable",
    "network.tls",
    "network.proxy",
    "service.redirect",
]


def test_every_kind_the_library_raises_with_a_remedy_has_a_hint():
    for kind in LIBRARY_KINDS:
        assert hint_for(YieldError("x", kind=kind)), kind


def test_a_kind_is_looked_up_whole_then_by_its_prefix():
    assert hint_for(AuthError("Missing credentials", kind="auth.missing_key")) == LOGIN_HINT
    assert hint_for(NetworkError("timed out", kind="network.timeout")) == "check the network or raise --timeout"
    assert hint_for(NetworkError("odd", kind="network.something_new")) == HINTS["network"]
    assert hint_for(ServiceError("Strategy not found", kind="service.status")) is None
    assert hint_for(YieldError("bug")) is None


def test_a_hint_the_error_already_carries_wins():
    assert hint_for(UsageError("bad", hint="write it like this")) == "write it like this"


def test_describe_gives_the_exit_code_and_the_json_error_object():
    described = describe(NetworkError("the proxy said no", kind="network.proxy"))
    assert described.code == ExitCode.NETWORK == 6
    assert json.loads(json.dumps(described.to_json())) == {
        "error": {"code": 6, "kind": "network.proxy", "message": "the proxy said no", "hint": HINTS["network.proxy"]}
    }
    assert describe(ServiceError("x", status=500)).to_json()["error"]["kind"] == "service"


def test_a_port_already_taken_is_bad_input_with_a_hint_not_a_bug():
    import socket

    from yieldcli.cli.cli_errors import describe_exception

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with socket.socket() as second, pytest.raises(OSError) as info:
            second.bind(taken.getsockname())
    described = describe_exception(info.value)
    assert described is not None and described.code == ExitCode.USAGE and described.kind == "usage.address"
    assert "already in use" in described.message and "--port" in (described.hint or "")


def test_other_exceptions_stay_bugs_and_library_errors_are_described():
    from yieldcli.cli.cli_errors import describe_exception

    assert describe_exception(ValueError("a bug")) is None
    assert describe_exception(FileNotFoundError(2, "No such file")) is None
    assert describe_exception(AuthError("Missing credentials", kind="auth.missing_key")).hint == LOGIN_HINT


def test_an_invalid_api_url_is_bad_input_and_its_credentials_are_not_repeated():
    from yieldcli import Client

    for url, reason in [
        ("https://[::1", "invalid ipv6 url"),
        ("https://exa mple.com", "spaces"),
        ("https://user:hunter2@example.com:99999", "port out of range"),
    ]:
        with pytest.raises(UsageError) as info:
            Client(url)
        assert info.value.kind == "usage.url" and reason in info.value.message and "hunter2" not in info.value.message
        assert "--api-url" in (hint_for(info.value) or "")


def test_the_pipelines_errors_get_the_command_that_checks_their_signature():
    from yieldcli.chain.transact.outcomes import Pending, SentThenInterrupted, with_signature

    signature = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb"
    pending = Pending({"status": "pending"}, signature, "still pending after the timeout").error()
    assert hint_for(pending) == f"check later with `yield tx status {signature}`"
    interrupted = with_signature(SentThenInterrupted("interrupted after sending", kind="tx.interrupted"), signature)
    assert hint_for(interrupted) == f"check it with `yield tx status {signature}`"
    assert describe(interrupted).code == ExitCode.INTERRUPTED


def test_a_hint_missing_the_field_it_names_is_left_out_rather_than_wrong():
    from yieldcli.errors import TransactionPending

    assert hint_for(TransactionPending("no signature known", kind="tx.pending")) is None
    refused = YieldError("an earlier deposit landed", kind="refused.landed_before")
    refused.action = "deposit"
    assert hint_for(refused) is None  # no signature to name
    refused.signature = "5sig"
    assert (
        hint_for(refused)
        == "see it with `yield tx status 5sig` and check your position; add --again to send another deposit"
    )


def test_the_fee_and_cluster_refusals_get_their_flags_from_the_table():
    from yieldcli.errors import Refused

    wrong = Refused("the RPC is devnet; this transaction is for mainnet-beta", kind="refused.cluster")
    wrong.expected_cluster = "mainnet-beta"
    assert hint_for(wrong) == "choose an RPC on mainnet-beta with --url"
    assert "--max-fee" in hint_for(Refused("too dear", kind="refused.fee.max"))
    assert "--ix" in hint_for(Refused("too big", kind="refused.fee.size"))
