"""A fund's status (Live, Paused, WithdrawOnly), set with `yield sandbox fund-status`: the service refuses
deposits unless the fund is live and withdrawals when it is paused, each a one-line error; `strategy
info` and `positions` show the status."""

from __future__ import annotations

from yieldcli.tokens import by_symbol

USDC = by_symbol("USDC").mint


def _refused(result, *words: str) -> None:
    assert result.code != 0
    lines = result.error_lines()
    assert len(lines) == 1, result.stderr
    assert all(w in lines[0] for w in words), result.stderr


def test_status_gates_deposits_and_withdrawals_with_one_line_refusals(run):
    assert run("sandbox", "fund-status", "USDC", "-o", "json").json()["status"] == "Live"
    assert run("--sandbox", "deposit", "--asset", "USDC", "--amount", "3", "--send", "--yes").code == 0

    set_paused = run("sandbox", "fund-status", "usdc", "paused", "-o", "json").json()
    assert set_paused["status"] == "Paused" and set_paused["asset"] == USDC
    info = run("--sandbox", "strategy", "info", "-o", "json").json()
    assert info["status_per_asset"][USDC] == "Paused"
    assert "Paused" in run("--sandbox", "strategy", "info", "-o", "table").stdout
    _refused(run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1"), "is Paused", "Deposits are not accepted")
    _refused(run("--sandbox", "withdraw", "--asset", "USDC", "--amount", "1"), "is Paused", "Withdrawals")
    table = run("--sandbox", "positions", "--asset", "USDC", "-o", "table").stdout
    assert "Status" in table and "Paused" in table

    run("sandbox", "fund-status", "USDC", "withdraw-only")
    _refused(run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1"), "is WithdrawOnly", "Deposits")
    withdrawn = run("--sandbox", "withdraw", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")
    assert withdrawn.code == 0, withdrawn.stderr
    (usdc,) = run("--sandbox", "positions", "--asset", "USDC", "-o", "json").json()["data"]
    assert usdc["fund_status"] == "WithdrawOnly"

    run("sandbox", "fund-status", "USDC", "live")
    assert run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1").code == 0
    # Every fund live: no Status column to read past.
    assert "Status" not in run("--sandbox", "positions", "-o", "table").stdout


def test_bad_fund_status_input_is_one_clear_line(run):
    bad = run("sandbox", "fund-status", "USDC", "frozen")
    assert bad.code == 2 and "live, paused or withdraw-only" in bad.stderr
    unknown = run("sandbox", "fund-status", "USDC", "paused", "--strategy", "nope")
    assert unknown.code == 2 and len(unknown.error_lines()) == 1
