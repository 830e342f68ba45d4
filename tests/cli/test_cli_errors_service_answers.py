"""Whatever the service answers, or fails to answer, ends in one clear line and the right exit code."""

import json
import socket

import pytest

from tests.conftest import TEST_API_KEY
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET

BALANCES = ["balances", DEMO_WALLET]


def one_line_error(result):
    lines = result.error_lines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    return lines[0]


def test_missing_key_is_exit_4_with_the_service_message(run, sandbox):
    result = run("--api-url", sandbox.url, "strategy", "info", DEMO_STRATEGY_ID)
    assert result.code == 4
    assert "Missing credentials" in one_line_error(result)
    assert "yield auth login" in result.stderr


def test_invalid_key_is_exit_4_with_the_service_message(run, sandbox):
    result = run("--api-url", sandbox.url, "balances", DEMO_WALLET, env={"YIELD_API_KEY": "wrong-key-123456789"})
    assert result.code == 4
    assert "API key invalid or doesn't exist" in one_line_error(result)


def test_unknown_strategy_shows_the_service_message_and_is_bad_input(api):
    result = api("strategy", "info", "no-such-strategy")
    # A typo in CI fails as bad input (2), as an unknown asset does, not as a service failure (5).
    assert result.code == 2 and "Strategy not found" in one_line_error(result)
    assert _json_error(result)["kind"] == "usage.strategy.unknown"


@pytest.mark.parametrize(
    "status, body, content_type, expected",
    [
        (
            400,
            b'{"message":"strategy_id query parameter is required"}',
            "application/json",
            "strategy_id query parameter is required",
        ),
        (
            400,
            b'"Failed to deserialize query string: page: invalid digit found in string"',
            "text/plain; charset=utf-8",
            "Failed to deserialize query string: page: invalid digit found in string",
        ),
        (500, b'{"message":"Internal server error"}', "application/json", "Internal server error"),
        (500, b"<html><body><h1>500 Internal Server Error</h1></body></html>", "text/html", "HTML page"),
        (404, b"", "text/plain", "HTTP 404"),
        (200, b'{"data": [{"decimals": 6', "application/json", "not JSON"),
        (200, b"<!doctype html><p>maintenance</p>", "text/html", "not JSON"),
        (200, b'{"data": {}, "meta": {}}', "application/json", "not a list"),
        (200, b"[1, 2, 3]", "application/json", "not a JSON object"),
        (
            200,
            b'{"data": [], "meta": {"has_more": "no", "page": 1, "per_page": 10, "total": 0, "total_pages": 0}}',
            "application/json",
            "has_more",
        ),
        (
            200,
            b'{"data": [{"token_address": "x", "decimals": 6, "total_balance": 1.5}], '
            b'"meta": {"has_more": false, "page": 1, "per_page": 10, "total": 1, "total_pages": 1}}',
            "application/json",
            "total_balance=1.5",
        ),
        (
            200,
            b'{"data": [{"token_address": "x", "decimals": 6}], '
            b'"meta": {"has_more": false, "page": 1, "per_page": 10, "total": 1, "total_pages": 1}}',
            "application/json",
            "without the field 'total_balance'",
        ),
        (301, b"", "text/plain", "redirected"),
    ],
)
@pytest.mark.parametrize("mode", ["json", "table"])
def test_broken_answers_end_in_a_clear_error(api, sandbox, status, body, content_type, expected, mode):
    headers = {"location": "https://elsewhere.example/"} if status == 301 else {}
    sandbox.add_fault("GET", "/user-balances/", status, body, content_type=content_type, headers=headers)
    result = api(*BALANCES, "-o", mode)
    assert result.code == 5, result.stderr
    assert expected in one_line_error(result)


@pytest.mark.parametrize("mode", ["json", "table", "csv"])
def test_null_and_extra_fields_render(api, sandbox, mode):
    body = (
        b'{"data": [{"decimals": 9, "token_address": "11111111111111111111111111111112", "token_name": "Solana",'
        b' "token_symbol": "SOL", "total_balance": 1500000000, "yield_balance": null, "brand_new_field": [1]}],'
        b' "meta": {"has_more": false, "page": 1, "per_page": 10, "total": 1, "total_pages": 1, "extra": true}}'
    )
    sandbox.add_fault("GET", "/user-balances/", 200, body)
    result = api(*BALANCES, "-o", mode)
    assert result.code == 0, result.stderr
    if mode == "json":
        assert result.json()["data"][0]["brand_new_field"] == [1]  # mirrored as the service sent it
    elif mode == "table":
        assert "1.50" in result.stdout


def test_retries_503_and_429_with_retry_after_then_succeeds(api, sandbox):
    sandbox.add_fault("GET", "/user-balances/", 503, b'{"message":"busy"}', times=1)
    sandbox.add_fault("GET", "/user-balances/", 429, b'{"message":"slow down"}', headers={"Retry-After": "0"}, times=1)
    result = api(*BALANCES, "--verbose")
    assert result.code == 0, result.stderr
    assert result.stderr.count("retrying") == 2
    assert "-> 503" in result.stderr and "-> 429" in result.stderr and "-> 200" in result.stderr


def test_gives_up_after_bounded_retries(api, sandbox):
    sandbox.add_fault("GET", "/user-balances/", 502, b"<html>bad gateway</html>", content_type="text/html", times=None)
    result = api(*BALANCES, "--verbose")
    assert result.code == 5
    assert result.stderr.count("-> 502") == 4  # one try and three retries


def test_timeout_is_a_network_error(api, sandbox):
    sandbox.add_fault("GET", "/user-balances/", 200, b"{}", delay_s=3, times=None)
    result = api(*BALANCES, "--timeout", "0.3")
    assert result.code == 6 and "timeout" in one_line_error(result)


def test_connection_refused_is_a_network_error(run):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = run("--api-url", f"http://127.0.0.1:{port}", *BALANCES, env={"YIELD_API_KEY": TEST_API_KEY})
    assert result.code == 6 and "cannot reach the service" in one_line_error(result)


def test_a_dropped_connection_is_retried_then_reported(api, sandbox):
    sandbox.add_fault("GET", "/user-balances/", 200, b"", disconnect=True, times=None)
    result = api(*BALANCES)
    assert result.code == 6


def test_plain_http_to_a_remote_host_is_refused(run):
    result = run("--api-url", "http://example.com", *BALANCES, env={"YIELD_API_KEY": TEST_API_KEY})
    assert result.code == 2 and "plain http" in result.stderr


def test_the_key_never_appears_in_any_output(api, sandbox):
    sandbox.add_fault("GET", "/user-balances/", 503, b'{"message":"busy"}', times=1)
    for args in (
        ["--verbose", *BALANCES],
        ["--debug", *BALANCES],
        ["--verbose", "config", "show"],
        ["auth", "status"],
        ["--debug", "strategy", "info", "nope"],
    ):
        result = api(*args)
        assert TEST_API_KEY not in result.stdout + result.stderr, args
    verbose = api("--verbose", *BALANCES)
    assert "x-api-key: ****" in verbose.stderr


def test_debug_shows_a_traceback_and_plain_runs_do_not(api):
    plain = api("strategy", "info", "nope")
    debug = api("--debug", "strategy", "info", "nope")
    assert "Traceback" not in plain.stderr and "Traceback" in debug.stderr
    assert plain.code == debug.code == 2


def _json_error(result) -> dict:
    """The last line of stderr in a JSON mode: one object a script reads with json.loads."""
    return json.loads(result.stderr.strip().splitlines()[-1])["error"]


def test_in_json_modes_an_error_is_also_one_json_object_on_stderr(api, sandbox):
    usage = api("positions", "0OIl", "-o", "json")
    assert usage.code == 2 and usage.stdout == ""
    error = _json_error(usage)
    assert error["code"] == 2 and error["kind"].startswith("usage") and "0OIl" in error["message"]
    assert usage.stderr.startswith("error: ")  # the human line comes first, as in every mode

    service = api("--json", "strategy", "info", "no-such-strategy")
    assert service.code == 2
    assert _json_error(service) == {
        "code": 2,
        "kind": "usage.strategy.unknown",
        "message": "Strategy not found: 'no-such-strategy' (from the command line)",
        "hint": ("check the id with `yield strategy info ID`; `yield config show` says where it came from"),
    }

    with socket.socket() as closed:  # a port nobody listens on: connection refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    network = api("balances", DEMO_WALLET, "-o", "ndjson", env={"YIELD_API_URL": f"http://127.0.0.1:{port}"})
    error = _json_error(network)
    assert network.code == 6 and error["code"] == 6 and error["kind"].startswith("network")
    assert "`yield config set api_url URL`" in error["hint"] and TEST_API_KEY not in network.stderr


def service_kind(result) -> str:
    kind = _json_error(result)["kind"]
    assert kind.startswith("service"), kind
    return kind


def test_json_because_stdout_is_not_a_terminal_writes_it_too_and_a_table_does_not(api):
    piped = api("strategy", "info", "no-such-strategy")  # stdout is a pipe here: JSON by default
    assert piped.code == 2 and _json_error(piped)["message"].startswith("Strategy not found")
    table = api("strategy", "info", "no-such-strategy", "-o", "table")
    assert table.code == 2 and table.stderr.strip().splitlines() == [one_line_error(table)]
    assert "{" not in table.stderr

    bad_flag = api("positions", "--no-such-flag")  # refused by the parser, before any session
    assert bad_flag.code == 2 and _json_error(bad_flag)["kind"] == "usage"


HOSTILE = "No position\u202e \u2066gnissim\x1b[2K\r\nerror: none\u200b\u0085 \U000e0020end"


@pytest.mark.parametrize(
    "status, body, headers",
    [
        (400, json.dumps({"message": HOSTILE}), {}),
    ],
)
def test_the_service_s_words_in_an_error_read_as_they_are(api, sandbox, status, body, headers):
    # A hostile service's message (or redirect target) with controls, bidirectional overrides and
    # invisible characters: the error line shows each as \u{...}; nothing reaches the terminal raw.
    sandbox.add_fault("GET", "/user-balances/", status, body.encode(), content_type="application/json", headers=headers)
    result = api(*BALANCES, "-o", "table")
    assert result.code == 5, result.stderr
    line = result.stderr.splitlines()[0]
    assert "\\u{202E}" in line and "\x1b" not in line and "\u202e" not in line and "\x07" not in line
    assert len(result.stderr.strip().splitlines()) == 1  # one line: no break smuggled in
