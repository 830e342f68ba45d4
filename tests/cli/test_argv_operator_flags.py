"""Flags with one meaning, accepted where a Solana operator types them, through the `yield` command."""

import json

from solders.keypair import Keypair

from tests.conftest import usdc_position, write_keypair
from yieldcli.sandbox.demo import demo_keypair


def test_keypair_and_url_are_accepted_by_every_command_before_or_after_it(run, tmp_path):
    stranger = write_keypair(tmp_path / "user2.json", Keypair())
    demo = write_keypair(tmp_path / "demo.json", demo_keypair())

    def positions(where, *flags):
        args = (
            ["--sandbox", *flags, "positions", "-o", "json"]
            if where == "before"
            else ["--sandbox", "positions", "-o", "json", *flags]
        )
        result = run(*args)
        assert result.code == 0, (where, result.stderr)
        return result.json()["data"]

    for where in ("before", "after"):
        assert positions(where, "-k", demo) and positions(where, "--keypair", demo)  # the demo wallet has positions
        # that key's wallet: none
        assert positions(where, "-k", stranger) == [] and positions(where, "--keypair", stranger) == []
        assert (
            positions(where, "-u", "localhost")
            == positions(where, "--url", "http://127.0.0.1:8899")
            == positions(where)
        )
    for command in (["health"], ["balances"], ["earnings"], ["strategy", "info"], ["config", "show"]):
        result = run("--sandbox", *command, "-k", demo, "-u", "devnet", "-o", "json")
        assert result.code == 0, (command, result.stderr)


def test_timeout_is_seconds_per_request_everywhere_and_the_wait_has_its_own_name(chain, sandbox):
    sandbox.runtime.set_fault("slow", seconds=1.5, methods=["simulateTransaction"])
    for args in (["--timeout", "0.5", "deposit"], ["deposit", "--timeout", "0.5"]):
        result = chain(*args, "--asset", "USDC", "--amount", "1", "-o", "json")
        # the simulation's request gives up after half a second: the review is not checked (6)
        assert result.code == 6 and "within 0.5 s" in result.stderr, (args, result.stderr)
    assert chain("deposit", "--asset", "USDC", "--amount", "1", "-o", "json").code == 0
    sandbox.runtime.set_fault("clear")
    pending_check = chain("deposit", "--asset", "USDC", "--amount", "1", "--confirm-timeout", "0", "--send", "--yes")
    assert pending_check.code == 2 and "--confirm-timeout" in pending_check.stderr
    before = usdc_position(chain)
    sent = chain(
        "deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "--confirm-timeout", "60", "-o", "json"
    )
    assert sent.code == 0 and json.loads(sent.stdout)["status"] == "confirmed"
    assert usdc_position(chain) == before + 1_000_000


def test_limit_zero_is_refused_a_page_past_the_last_is_said_and_sort_by_takes_the_documented_fields(run):
    zero = run("--sandbox", "positions", "--limit", "0")
    assert zero.code == 2 and "--limit" in zero.stderr
    last = run("--sandbox", "positions", "--limit", "1", "-o", "json").json()["meta"]["total_pages"]
    past = run("--sandbox", "positions", "--limit", "1", "--page", str(last + 1), "-o", "json")
    assert past.code == 0 and past.json()["data"] == []
    assert f"page {last + 1} is past the last page of positions ({last})" in past.stderr
    assert "past the last" not in run("--sandbox", "positions", "--limit", "1", "--page", str(last)).stderr
    for kind, good, bad in (("positions", "apy", "total_balance"), ("balances", "total_balance", "apy")):
        assert run("--sandbox", kind, "--sort-by", good, "-o", "json").code == 0
        assert run("--sandbox", kind, "--sort-by", "balance", "-o", "json").code == 0
        refused = run("--sandbox", kind, "--sort-by", bad)
        assert refused.code == 2 and f"invalid --sort-by '{bad}'" in refused.stderr and good in refused.stderr


def test_completion_offers_the_sort_fields_of_the_listing(run):
    def ask(*words):
        env = {"_YIELD_COMPLETE": "complete_bash", "COMP_WORDS": "\n".join(words), "COMP_CWORD": str(len(words) - 1)}
        return run(env=env).stdout.split()

    assert ask("yield", "balances", "--sort-by", "") == ["balance", "decimals", "total_balance"]
    assert ask("yield", "positions", "--sort-by", "total_p") == ["total_position_value"]


def test_usage_errors_name_everything_missing_and_what_excludes_what(run):
    alone = run("--sandbox", "deposit")
    assert alone.code == 2 and "missing --asset and --amount (or --all)" in alone.stderr
    assert "missing --amount (or --all)" in run("--sandbox", "withdraw", "--asset", "USDC").stderr
    assert "missing --asset" in run("--sandbox", "deposit", "--all").stderr
    both = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--sign", "--send", "--yes")
    assert both.code == 2 and "--sign and --send exclude each other" in both.stderr


def test_a_mistyped_command_gets_a_suggestion(run):
    for typed, meant, where in (("positon", "positions", []), ("depost", "deposit", []), ("inf", "info", ["strategy"])):
        result = run(*where, typed)
        assert result.code == 2 and f"Did you mean '{meant}'?" in result.stderr, result.stderr
    assert "Did you mean" not in run("xyzzy").stderr
