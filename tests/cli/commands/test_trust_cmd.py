"""Trusting a destination for plain transfers on deposits: `yield config trust`, and the guard obeying it.

A stand-in service (tests/cli/commands/test_write_intent.py) replaces the strategy program's deposit by a plain
`TransferChecked` of the same amount from the user's token account to another account, as a
deployment whose deposits move funds by a plain transfer would. Refused until the user trusts that
account for this cluster and strategy; then it confirms, and nothing else does.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess

import pytest
from solders.keypair import Keypair

from tests.cli.commands.test_write_intent import _token_ix, destination_swapped
from tests.cli.commands.test_write_intent_attacks import close_position_to_stranger
from tests.cli.stand_in import USDC_MINT, USER_ATA, WALLET, rpc_call
from tests.conftest import TEST_API_KEY, YIELD
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair
from yieldcli.solana import programs

DEPOSIT = ("deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes")
MAINNET_GENESIS = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
HINT = re.compile(r"`(yield config trust add [^`]+)`")


def read(path: str) -> str:
    with open(path) as f:
        return f.read()


def write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def trust_file(home) -> str:
    return str(home / ".config" / "yield" / "trusted-destinations.toml")


def balance(w, account) -> int:
    answer = rpc_call(w.sandbox.rpc_url, "getTokenAccountBalance", [str(account), {"commitment": "confirmed"}])
    return int(answer["value"]["amount"])


def plain_transfer(destination, amount: int):
    """The deposit replaced by a plain TransferChecked of `amount` base units of USDC to `destination`."""

    def change(ixs):
        i = _token_ix(ixs)
        ixs[i] = programs.token_transfer_checked(USER_ATA, USDC_MINT, destination, WALLET, amount, 6)
        return ixs

    return change


def trust_from_hint(w, refused) -> None:
    """Run the command the refusal's hint gives, as a person would paste it."""
    command = HINT.search(refused.stderr)
    assert command, refused.stderr
    words = shlex.split(command.group(1))
    assert words[:5] == ["yield", "config", "trust", "add", str(w.stranger_ata)], words
    added = w.yield_(*words[1:])
    assert added.code == 0, added.stderr


def test_a_plain_transfer_is_refused_with_the_command_that_trusts_it_then_confirms_once_trusted(world, isolated):
    world.doctor(destination_swapped(world.stranger_ata))
    before = world.snapshot()
    refused = world.yield_(*DEPOSIT, "-o", "json")
    assert refused.code == 10, refused.stderr
    assert "a destination you have not trusted for this strategy on this cluster" in refused.stderr
    assert "signature" not in refused.json() and world.snapshot() == before
    assert refused.json()["effect"]["untrusted_destinations"] == [str(world.stranger_ata)]
    error = json.loads(refused.stderr.strip().splitlines()[-1])["error"]
    assert error["kind"] == "refused.mismatch.untrusted" and "yield config trust add" in error["hint"]
    assert HINT.search(refused.stderr).group(1) == (
        f"yield config trust add {world.stranger_ata} --asset USDC --strategy {DEMO_STRATEGY_ID}"
    )
    trust_from_hint(world, refused)
    assert os.stat(trust_file(isolated)).st_mode & 0o777 == 0o600

    received = balance(world, world.stranger_ata)
    done = world.yield_(*DEPOSIT, "-o", "json")
    assert done.code == 0, done.stderr
    effect = done.json()["effect"]
    assert done.json()["status"] == "confirmed" and effect["differences"] == []
    verdict = next(v for v in effect["instructions"] if v["kind"] == "Token TransferChecked")
    assert verdict["ok"] and verdict["reason"] == (
        f"TransferChecked 10 USDC to {str(world.stranger_ata)[:4]}…{str(world.stranger_ata)[-4:]} "
        "(trusted by you for this strategy on this cluster)"
    )
    assert any("destinations you trust" in fact for fact in effect["verified"])
    assert balance(world, world.stranger_ata) - received == 10_000_000
    table = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "-o", "table")
    assert "✓ TransferChecked 10 USDC to" in table.stdout and "(trusted by you for this" in table.stdout


def test_trust_for_another_strategy_or_cluster_does_not_apply(world, isolated):
    world.doctor(destination_swapped(world.stranger_ata))
    other = world.yield_("config", "trust", "add", str(world.stranger_ata), "--strategy", "another-strategy")
    assert other.code == 0, other.stderr
    refused = world.yield_(*DEPOSIT)
    assert refused.code == 10 and "you have not trusted" in refused.stderr, refused.stderr

    # The same destination, strategy and mint, but the entry names mainnet's genesis hash.
    path = trust_file(isolated)
    text = read(path).replace("another-strategy", DEMO_STRATEGY_ID)
    genesis = rpc_call(world.sandbox.rpc_url, "getGenesisHash", [])
    assert genesis in text
    write(path, text.replace(genesis, MAINNET_GENESIS))
    before = world.snapshot()
    refused = world.yield_(*DEPOSIT)
    assert refused.code == 10 and "you have not trusted" in refused.stderr, refused.stderr
    assert world.snapshot() == before
    write(path, text)  # the sandbox's own cluster: now it applies
    assert world.yield_(*DEPOSIT).code == 0


def test_a_trusted_destination_never_takes_more_than_the_deposit(world):
    assert world.yield_("config", "trust", "add", str(world.stranger_ata), "--asset", "USDC").code == 0
    world.doctor(plain_transfer(world.stranger_ata, 20_000_000))
    before = world.snapshot()
    refused = world.yield_(*DEPOSIT)
    assert refused.code == 10, refused.stderr
    assert (
        "more than the deposit of 10 USDC" in refused.stderr
        and "expected -10 USDC, simulated -20 USDC" in refused.stderr
    )
    assert "trust add" not in refused.stderr  # trusting cannot make it pass: no such hint
    assert world.snapshot() == before


def test_trust_does_not_apply_to_a_withdrawal(world):
    assert world.yield_("config", "trust", "add", str(world.stranger_ata)).code == 0
    # Beside the withdrawal, the rest of the position paid out to the trusted account.
    world.doctor(close_position_to_stranger(world))
    before = world.snapshot()
    refused = world.yield_("withdraw", "--asset", "USDC", "--amount", "5", "--send", "--yes")
    assert refused.code == 10 and "the strategy's close, which a withdraw does not need" in refused.stderr, (
        refused.stderr
    )
    assert world.snapshot() == before
    # Beside the withdrawal, a plain transfer of 1 USDC out of the user's account to it.
    out = programs.token_transfer_checked(USER_ATA, USDC_MINT, world.stranger_ata, WALLET, 1_000_000, 6)
    world.doctor(lambda ixs: ixs + [out])
    refused = world.yield_("withdraw", "--asset", "USDC", "--amount", "5", "--send", "--yes")
    assert refused.code == 10 and "only the strategy program may move your tokens" in refused.stderr
    assert "trust add" not in refused.stderr and world.snapshot() == before


def test_another_token_does_not_flow_to_a_trusted_destination(world, isolated):
    """Trust is pinned to the token it was given for: the same account trusted for another mint does not count."""
    assert world.yield_("config", "trust", "add", str(world.stranger_ata)).code == 0
    path = trust_file(isolated)
    write(path, read(path).replace(str(USDC_MINT), "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"))
    world.doctor(destination_swapped(world.stranger_ata))
    refused = world.yield_(*DEPOSIT)
    assert refused.code == 10 and "you have not trusted" in refused.stderr, refused.stderr


def test_eight_concurrent_trust_adds_keep_every_entry(world, isolated):
    accounts = [str(world.runtime.create_associated_token_account(Keypair().pubkey(), USDC_MINT)) for _ in range(8)]
    env = {**os.environ, **world.env()}
    procs = [
        subprocess.Popen(
            [YIELD, "config", "trust", "add", a, "--asset", "USDC"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for a in accounts
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    listed = world.yield_("config", "trust", "list", "-o", "json").json()
    assert sorted(e["destination"] for e in listed) == sorted(accounts)
    assert {e["asset"] for e in listed} == {"USDC"} and {e["strategy"] for e in listed} == {DEMO_STRATEGY_ID}
    removed = world.yield_("config", "trust", "remove", accounts[0])
    assert removed.code == 0 and "no longer trusted" in removed.stderr
    assert len(world.yield_("config", "trust", "list", "-o", "json").json()) == 7


def test_add_checks_the_destination_on_chain(world):
    wrong = world.yield_("config", "trust", "add", str(world.stranger_ata), "--asset", "USDT")
    assert wrong.code == 2 and "holds USDC" in wrong.stderr, wrong.stderr
    wallet = world.yield_("config", "trust", "add", str(WALLET))
    assert wallet.code == 2 and "is not a token account" in wallet.stderr
    absent = world.yield_("config", "trust", "add", str(Keypair().pubkey()))
    assert absent.code == 2 and "--asset" in absent.stderr
    bad = world.yield_("config", "trust", "add", "not-an-address")
    assert bad.code == 2 and "not a Solana address" in bad.stderr


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda path: os.chmod(path, 0o620), id="group-writable"),
        pytest.param(lambda path: write(path, "[[trusted]\ncluster = \x00"), id="garbled"),
        pytest.param(lambda path: write(path, '[[trusted]]\ncluster = "x"\n'), id="hostile"),
        pytest.param(lambda path: (os.remove(path), os.mkfifo(path)), id="named-pipe"),
    ],
)
def test_a_trust_file_others_can_change_or_that_is_garbled_is_exit_3_on_one_line(world, isolated, spoil):
    assert world.yield_("config", "trust", "add", str(world.stranger_ata)).code == 0
    spoil(trust_file(isolated))
    world.doctor(destination_swapped(world.stranger_ata))
    before = world.snapshot()
    for args in (DEPOSIT, ("config", "trust", "list"), ("config", "trust", "add", str(world.stranger_ata))):
        failed = world.yield_(*args)
        assert failed.code == 3, (args, failed.stderr)
        lines = failed.error_lines()
        assert len(lines) == 1 and "trust file" in lines[0], failed.stderr
        assert "pass -" not in lines[0]  # no `-` reads a trust file from standard input
    assert world.snapshot() == before
    doctor = world.yield_("doctor", "-o", "json")
    found = {c["name"]: c for c in doctor.json()["checks"]}
    assert doctor.code == 3 and found["trusted destinations"]["status"] == "fail"


def test_doctor_and_config_show_list_the_trusted_destinations(world):
    def doctor_line():
        checks = world.yield_("doctor", "-o", "json").json()["checks"]
        return next(c for c in checks if c["name"] == "trusted destinations")

    assert doctor_line()["detail"].startswith("none for strategy " + DEMO_STRATEGY_ID)
    assert world.yield_("config", "trust", "add", str(world.stranger_ata)).code == 0
    shown = str(world.stranger_ata)
    assert doctor_line()["detail"] == (
        f"1 for strategy {DEMO_STRATEGY_ID} on this cluster: {shown[:4]}…{shown[-4:]} (USDC)"
    )
    rows = {r["name"]: r for r in world.yield_("config", "show", "-o", "json").json()}
    assert rows["trusted_destinations"]["value"] == 1


def test_the_python_client_obeys_trust(world):
    from yieldcli.errors import Refused

    world.doctor(destination_swapped(world.stranger_ata))
    before = world.snapshot()
    with world.client() as client, pytest.raises(Refused, match="you have not trusted") as refused:
        client.deposit("USDC", "10").send(confirm=lambda *a: True)
    assert refused.value.kind == "refused.mismatch.untrusted" and refused.value.destination == str(world.stranger_ata)
    assert world.snapshot() == before
    assert world.yield_("config", "trust", "add", str(world.stranger_ata)).code == 0
    with world.client() as client:
        assert client.deposit("USDC", "10").send(confirm=lambda *a: True).status == "confirmed"


def test_from_profile_reads_the_strategy_program(world, run):
    """A profile's `strategy_program` is the only program trusted: the sandbox's deposit is then refused."""
    from yieldcli.client.clients import Client
    from yieldcli.errors import Refused

    other = str(Keypair().pubkey())
    assert run("config", "set", "strategy_program", other).code == 0
    given = {
        "api_url": world.stand_in.url,
        "api_key": TEST_API_KEY,
        "strategy": DEMO_STRATEGY_ID,
        "rpc_url": world.sandbox.rpc_url,
        "keypair": demo_keypair(),
        "journal_path": world.keypair + ".journal",
    }
    with (
        Client.from_profile(**given) as client,
        pytest.raises(Refused, match="Sandbox strategy program is not one this request needs"),
    ):
        client.deposit("USDC", "10").send(confirm=lambda *a: True)
    assert run("config", "unset", "strategy_program").code == 0
    with Client.from_profile(**given) as client:
        assert client.deposit("USDC", "10").send(confirm=lambda *a: True).status == "confirmed"


def test_tx_sign_with_a_stated_deposit_does_not_use_trust(world, tmp_path):
    """A transaction from anywhere names no strategy: trust, given per strategy, cannot apply to it."""
    assert world.yield_("config", "trust", "add", str(world.stranger_ata)).code == 0
    world.doctor(destination_swapped(world.stranger_ata))
    saved = tmp_path / "plain.json"
    saved.write_text(world.yield_("deposit", "--asset", "USDC", "--amount", "10", "-o", "json").stdout)
    before = world.snapshot()
    refused = world.yield_("tx", "send", str(saved), "--expect", "deposit:USDC:10", "--yes")
    assert refused.code == 10 and "only the strategy program may move your tokens" in refused.stderr, refused.stderr
    assert "trust add" not in refused.stderr and world.snapshot() == before
