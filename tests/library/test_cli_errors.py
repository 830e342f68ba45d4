"""The command line's table: every kind the library raises gets the hint a `yield` user needs."""

from __future__ import annotations

import json

from yieldcli.cli_errors import HINTS, LOGIN_HINT, describe, hint_for
from yieldcli.errors import AuthError, ExitCode, NetworkError, ServiceError, UsageError, YieldError

LIBRARY_KINDS = ["auth.missing_key", "auth.rejected", "network.timeout", "network.unreachable", "network.tls",
                 "network.proxy", "service.redirect"]


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
    assert json.loads(json.dumps(described.to_json())) == {"error": {
        "code": 6, "kind": "network.proxy", "message": "the proxy said no", "hint": HINTS["network.proxy"]}}
    assert describe(ServiceError("x", status=500)).to_json()["error"]["kind"] == "service"
