"""What the client sends conforms to the OpenAPI document: paths, query names and value types."""

from tests.conftest import TEST_API_KEY
from tests.contract.openapi_doc import check_request
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET


def recorded_requests(sandbox):
    """Record every request the served sandbox receives (the sandbox is test infrastructure here)."""
    seen = []
    handle = sandbox.service.handle

    def recording(method, path, query, headers, body):
        seen.append((method, path, query, dict(headers), body))
        return handle(method, path, query, headers, body)

    sandbox.service.handle = recording
    return seen


def test_every_read_request_conforms(api, sandbox):
    # A fund the wallet has: `--fund` is checked against them (an unknown one is exit 2, asking nothing more).
    fund = api("earnings", DEMO_WALLET, "-o", "json").json()["data"][0]["fund_id"]
    seen = recorded_requests(sandbox)
    commands = [
        ["strategy", "info", DEMO_STRATEGY_ID],
        [
            "positions",
            DEMO_WALLET,
            "--strategy",
            DEMO_STRATEGY_ID,
            "--asset",
            "USDC",
            "--sort-by",
            "balance",
            "--order",
            "desc",
            "--page",
            "1",
            "--limit",
            "2",
        ],
        ["positions", DEMO_WALLET, "--strategy", DEMO_STRATEGY_ID, "--all", "--limit", "2"],
        ["balances", DEMO_WALLET, "--asset", "SOL", "--order", "asc", "--limit", "5"],
        ["balances", DEMO_WALLET, "--all"],
        ["earnings", DEMO_WALLET, "--fund", fund, "--page", "2", "--limit", "1"],
        ["health"],
    ]
    for command in commands:
        assert api(*command).code in (0, 5), command
    assert len(seen) >= len(commands)
    problems = [p for method, path, query, _, body in seen for p in check_request(method, path, query, body)]
    assert problems == []
    assert all(headers.get("x-api-key") == TEST_API_KEY for *_, headers, _ in seen)


def test_the_checker_catches_a_bad_request():
    assert check_request("GET", f"/user-balances/{DEMO_WALLET}", "page=-1&colour=red", b"")
    assert check_request("GET", f"/breeze-balances/{DEMO_WALLET}", "", b"")  # strategy_id is required
