"""Flags with one meaning, accepted where a Solana operator types them, through the `yield` command."""

import json

from solders.keypair import Keypair

from tests.cli.test_write import chain, usdc_position, write_keypair  # noqa: F401 (chain is a fixture)
from yieldcli.sandbox.demo import demo_keypair


def test_keypair_and_url_are_accepted_by_every_command_before_or_after_it(run, tmp_path):
    stranger = write_keypair(tmp_path / "user2.json", Keypair())
    demo = write_keypair(tmp_path / "demo.json", demo_keypair())
    for where in ("before", "after"):
        def positions(*flags):
            args = ["--sandbox", *flags, "positions", "-o", "json"] if where == "before" else ["--sandbox", "positions", "-o", "json", *flags]
            result = run(*args)
            assert result.code == 0, (where, result.stderr)
            return result.json()["data"]

        assert positions("-k", demo) and positions("--keypair", demo)  # the demo wallet has positions
        assert positions("-k", stranger) == [] and positions("--keypair", stranger) == []  # that key's wallet: none
        assert positions("-u", "localhost") == positions("--url", "http://127.0.0.1:8899") == positions()
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
    sent = chain("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "--confirm-timeout", "60", "-o", "json")
    assert sent.code == 0 and json.loads(sent.stdout)["status"] == "confirmed"
    assert usdc_position(chain) == before + 1_000_000
