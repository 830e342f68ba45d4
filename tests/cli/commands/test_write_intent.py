"""The intent guard as users meet it: a stand-in service answers deposits with doctored versions of
the sandbox's own transactions, and `yield ... --send --yes` must refuse each before any signature.

The stand-in (tests/cli/stand_in.py) is a small HTTP server on loopback that forwards every request to
the sandbox service and rewrites the `/deposit/tx` and `/withdraw/tx` answers: the sandbox's
transaction is decompiled, changed, and compiled again with solders for the same payer and blockhash.
"""

from __future__ import annotations

import struct

import pytest
from solders.compute_budget import set_compute_unit_price
from solders.instruction import AccountMeta, Instruction
from solders.system_program import TransferParams, transfer

from tests.cli.stand_in import TOKEN, USDC_MINT, USER_ATA, WALLET, rpc_call
from tests.cli.test_prompts import Terminal
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID
from yieldcli.solana import programs, strategy_program

U64_MAX = 2**64 - 1


def _token_ix(ixs):
    """The strategy program's deposit or withdrawal: its data is the tag, then the amount (u64)."""
    return next(i for i, ix in enumerate(ixs) if ix.program_id == strategy_program.PROGRAM)


def amount_changed(ixs):
    i = _token_ix(ixs)
    data = bytes(ixs[i].data)
    ixs[i] = Instruction(ixs[i].program_id, data[:1] + struct.pack("<Q", 1000 * 10**6) + data[9:], ixs[i].accounts)
    return ixs


def destination_swapped(stranger_ata):
    """The deposit replaced by a plain transfer of the same amount from the user's account to a stranger's."""

    def change(ixs):
        i = _token_ix(ixs)
        amount = struct.unpack_from("<Q", bytes(ixs[i].data), 1)[0]
        ixs[i] = programs.token_transfer_checked(USER_ATA, USDC_MINT, stranger_ata, WALLET, amount, 6)
        return ixs

    return change


def extra_sol(stranger):
    return lambda ixs: ixs + [transfer(TransferParams(from_pubkey=WALLET, to_pubkey=stranger, lamports=5 * 10**9))]


def approve_max(stranger):
    metas = [AccountMeta(USER_ATA, False, True), AccountMeta(stranger, False, False), AccountMeta(WALLET, True, False)]
    return lambda ixs: ixs + [Instruction(TOKEN, struct.pack("<BQ", 4, U64_MAX), metas)]


def set_owner(stranger):
    metas = [AccountMeta(USER_ATA, False, True), AccountMeta(WALLET, True, False)]
    return lambda ixs: ixs + [Instruction(TOKEN, bytes([6, 2, 1]) + bytes(stranger), metas)]


def close_to(stranger):
    return lambda ixs: ixs + [programs.token_close_account(USER_ATA, stranger, WALLET)]


def burn_from_user(ixs):
    # A program given the user's account (writable) that changes it: Burn debits it by 5 USDC.
    metas = [AccountMeta(USER_ATA, False, True), AccountMeta(USDC_MINT, False, True), AccountMeta(WALLET, True, False)]
    return ixs + [Instruction(TOKEN, struct.pack("<BQ", 8, 5 * 10**6), metas)]


ATTACKS = {
    "amount 1000 instead of 10": (lambda w: amount_changed, "expected -10 USDC, simulated -1,000 USDC"),
    "destination swapped to a stranger": (
        lambda w: destination_swapped(w.stranger_ata),
        "a destination you have not trusted",
    ),
    "extra 5 SOL to a third party": (lambda w: extra_sol(w.stranger), "simulated -5.000005 SOL"),
    "Approve u64 max to a stranger": (
        lambda w: approve_max(w.stranger),
        "may spend 18,446,744,073,709.551615 USDC of your USDC",
    ),
    "SetAuthority owner to a stranger": (lambda w: set_owner(w.stranger), "Token SetAuthority of your account"),
    "burn from the user's account": (lambda w: burn_from_user, "expected -10 USDC, simulated -15 USDC"),
    "priority fee of 0.2 SOL": (
        lambda w: lambda ixs: [set_compute_unit_price(10**9)] + ixs,
        "fee and rent come to 0.200005 SOL, more than the 0.01 SOL allowed",
    ),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_a_doctored_deposit_is_refused_before_signing_and_the_untouched_one_confirms(world, name):
    make, message = ATTACKS[name]
    before = world.snapshot()
    world.doctor(make(world))
    refused = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes", "-o", "json")
    assert refused.code == 10, refused.stderr
    assert message in refused.stderr and "nothing was signed" in refused.stderr
    body = refused.json()
    assert (
        body["status"] == "refused" and "signature" not in body and message in " ".join(body["effect"]["differences"])
    )
    assert world.snapshot() == before  # the chain is unchanged: nothing was signed or sent

    world.stand_in.doctor = lambda tx: tx  # the same stand-in, the untouched transaction
    ok = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes", "-o", "json")
    assert ok.code == 0, ok.stderr
    assert ok.json()["status"] == "confirmed" and ok.json()["effect"]["differences"] == []


def test_a_lookup_table_that_hides_the_strangers_account_is_refused(world):
    hidden = world.runtime.create_lookup_table([world.stranger_ata])
    world.runtime.advance_slots(1)
    before = world.snapshot()
    world.doctor(destination_swapped(world.stranger_ata), {hidden: [world.stranger_ata]})
    built = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "-o", "json").json()
    loaded = [a for ix in built["review"]["instructions"] for a in ix["accounts"] if a["lookup_table"] == str(hidden)]
    assert loaded and loaded[0]["address"] == str(
        world.stranger_ata
    )  # the stranger's account only comes from the table
    refused = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes")
    assert refused.code == 10 and "a destination you have not trusted" in refused.stderr, refused.stderr
    assert world.snapshot() == before


def test_closing_the_users_token_account_to_another_is_refused(world):
    before = world.snapshot()
    world.doctor(close_to(world.stranger))
    refused = world.yield_("deposit", "--asset", "USDC", "--all", "--send", "--yes")
    assert refused.code == 10, refused.stderr
    assert "Token CloseAccount of your account" in refused.stderr and "your SOL: expected" in refused.stderr
    assert world.snapshot() == before
    world.stand_in.doctor = lambda tx: tx
    assert world.yield_("deposit", "--asset", "USDC", "--all", "--send", "--yes").code == 0


def test_the_review_names_every_difference_first_and_in_red(world):
    world.doctor(amount_changed)
    shown = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "-o", "table", "--color", "always")
    assert shown.code == 10  # review only: the review is printed, and the exit code says what it found
    first, second = shown.stdout.splitlines()[:2]
    # The fee is said once, on the line below the summary (with its parts when there is a priority fee).
    assert "deposit 10 USDC from 5PJ1…Vr9k" in first and "fee" not in first
    assert second.strip().startswith("fee 0.000005 SOL")
    assert (
        "\x1b[31m" in shown.stdout
        and "✗ instruction 2: the strategy's deposit deposits 1,000 USDC, not 10 USDC" in shown.stdout
    )
    assert "expected -10 USDC, simulated -1,000 USDC" in shown.stdout


def test_no_simulation_no_signature(world):
    refused = world.yield_("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", "--no-simulate")
    assert refused.code == 10 and "could not be checked" in refused.stderr
    unsigned = world.yield_("deposit", "--asset", "USDC", "--amount", "1", "--sign", "--no-simulate", "-o", "json")
    assert unsigned.code == 10 and "could not be checked (the simulation was turned off)" in unsigned.stderr
    assert "signature" not in unsigned.json()
    reviewed = world.yield_("deposit", "--asset", "USDC", "--amount", "1", "--no-simulate", "-o", "json")
    assert reviewed.code == 10 and "not checked" in reviewed.stderr  # review only: the exit code says so


def test_unsafe_allow_mismatch_is_refused_off_a_terminal(world):
    world.doctor(amount_changed)
    result = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes", "--unsafe-allow-mismatch")
    assert result.code == 10 and "off a terminal" in result.stderr


def test_unsafe_allow_mismatch_on_a_terminal_shows_the_differences_and_still_asks(world):
    world.doctor(amount_changed)
    term = Terminal(
        "deposit", "--asset", "USDC", "--amount", "10", "--send", "--yes", "--unsafe-allow-mismatch", env=world.env()
    )
    term.expect("Sign and send this deposit?")  # --yes does not skip the question when the request is not met
    assert b"expected -10 USDC, simulated -1,000 USDC" in term.screen
    term.type("n\n")
    assert term.wait() == 12 and b"declined; nothing was signed" in term.screen


def _usdc(world) -> int:
    answer = rpc_call(world.sandbox.rpc_url, "getTokenAccountBalance", [str(USER_ATA), {"commitment": "confirmed"}])
    return int(answer["value"]["amount"])


def test_withdraw_with_exclude_fees_passes_and_pays_exactly(world):
    before = _usdc(world)
    result = world.yield_(
        "withdraw", "--asset", "USDC", "--amount", "5", "--exclude-fees", "--send", "--yes", "-o", "json"
    )
    assert result.code == 0, result.stderr
    assert result.json()["effect"]["observed"]["tokens"][str(USDC_MINT)] == 5_000_000
    after = _usdc(world)
    assert after - before == 5_000_000


def test_a_withdraw_paying_less_than_asked_with_exclude_fees_is_refused(world):
    def shrink(ixs):
        i = _token_ix(ixs)
        data = bytes(ixs[i].data)
        ixs[i] = Instruction(ixs[i].program_id, data[:1] + struct.pack("<Q", 4 * 10**6) + data[9:], ixs[i].accounts)
        return ixs

    world.doctor(shrink)
    result = world.yield_("withdraw", "--asset", "USDC", "--amount", "5", "--exclude-fees", "--send", "--yes")
    assert result.code == 10 and "expected +5 USDC, simulated +4 USDC" in result.stderr, result.stderr


def test_a_wrapped_sol_deposit_and_an_unwrapping_withdraw_pass(world):
    deposit = world.yield_("deposit", "--asset", "SOL", "--amount", "0.5", "--send", "--yes", "-o", "json")
    assert deposit.code == 0, deposit.stderr
    assert deposit.json()["effect"]["differences"] == []
    withdraw = world.yield_(
        "withdraw", "--asset", "SOL", "--amount", "0.2", "--unwrap-wsol", "--send", "--yes", "-o", "json"
    )
    assert withdraw.code == 0, withdraw.stderr
    effect = withdraw.json()["effect"]
    assert effect["differences"] == [] and 0 < effect["observed"]["sol"] <= 200_000_000
    assert "unwrapped to SOL" in effect["summary"]


def test_tx_sign_and_send_check_the_stated_intent(world, tmp_path):
    world.doctor(amount_changed)
    built = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "-o", "json")
    doctored = tmp_path / "doctored.json"
    doctored.write_text(built.stdout)
    for command in ("sign", "send"):
        refused = world.yield_(
            "tx", command, str(doctored), "--expect", "deposit:USDC:10", *(["--yes"] if command == "send" else [])
        )
        assert refused.code == 10 and "expected -10 USDC, simulated -1,000 USDC" in refused.stderr, refused.stderr
    # without --expect, signing may only cost the fee: 1000 USDC leaving is named
    plain = world.yield_("tx", "sign", str(doctored))
    assert plain.code == 10 and "no intent was stated" in plain.stderr and "--expect" in plain.stderr
    inspected = world.yield_("tx", "inspect", str(doctored), "--expect", "deposit:USDC:10", "-o", "json")
    assert inspected.code == 10 and inspected.json()["effect"]["summary"].startswith("deposit 10 USDC from 5PJ1…Vr9k")

    world.stand_in.doctor = None
    honest = tmp_path / "honest.json"
    honest.write_text(world.yield_("deposit", "--asset", "USDC", "--amount", "10", "-o", "json").stdout)
    sent = world.yield_("tx", "send", str(honest), "--expect", "deposit:USDC:10", "--yes", "-o", "json")
    assert sent.code == 0 and sent.json()["status"] == "confirmed", sent.stderr


def test_the_sol_cost_cap_has_a_flag(world):
    result = world.yield_("deposit", "--asset", "USDC", "--amount", "1", "--sign", "--max-sol-cost", "0.000001")
    assert result.code == 10 and "more than the 0.000001 SOL allowed" in result.stderr
    assert world.yield_("deposit", "--asset", "USDC", "--amount", "1", "--sign", "--max-sol-cost", "0.01").code == 0


def test_a_failed_simulation_before_sending_is_exit_11(world):
    world.doctor(
        lambda ixs: ixs + [transfer(TransferParams(from_pubkey=WALLET, to_pubkey=world.stranger, lamports=10**18))]
    )
    failed = world.yield_("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes")
    assert failed.code == 11 and "simulation failed" in failed.stderr, failed.stderr


def test_the_summary_is_repeated_just_above_the_prompt(world):
    term = Terminal("deposit", "--asset", "USDC", "--amount", "1", "--send", "-o", "json", env=world.env())
    term.expect("Sign and send this deposit?")
    lines = term.screen.decode().replace("\r", "").splitlines()
    prompt = next(i for i, line in enumerate(lines) if "Sign and send this deposit?" in line)
    # One part a line: the summary, then its fee, just above the question.
    assert lines[prompt - 2 : prompt] == [
        "deposit 1 USDC from 5PJ1…Vr9k to strategy " + DEMO_STRATEGY_ID,
        "  fee 0.000005 SOL",
    ]
    term.type("n\n")
    assert term.wait() == 12


def test_a_withdraw_that_also_drains_the_position_to_a_stranger_is_refused(world):
    position = strategy_program.position_address(WALLET, DEMO_STRATEGY_ID, USDC_MINT)
    # The user signs the withdrawal, so the user's signature also authorises closing the whole position
    # with what is left paid to a stranger's token account.
    drain = strategy_program.close(WALLET, world.stranger_ata, USDC_MINT, position)
    before = world.snapshot()
    world.doctor(lambda ixs: ixs + [drain])
    refused = world.yield_("withdraw", "--asset", "USDC", "--amount", "5", "--send", "--yes")
    assert refused.code == 10, refused.stderr
    assert "the strategy's close, which a withdraw does not need" in refused.stderr
    assert "your USDC position" in refused.stderr and "simulated closed" in refused.stderr
    assert world.snapshot() == before
    world.stand_in.doctor = None
    assert world.yield_("withdraw", "--asset", "USDC", "--amount", "5", "--send", "--yes").code == 0


def test_send_is_refused_when_the_rpc_cannot_be_reached(world):
    env = {**world.env(), "YIELD_RPC_URL": "http://127.0.0.1:9"}  # nothing listens on the discard port
    refused = world.run("deposit", "--asset", "USDC", "--amount", "1", "--send", "--yes", env=env)
    # What the transaction does could not be proven: exit 11, as for a simulation that failed.
    assert refused.code == 11 and "could not be checked (the simulation could not run" in refused.stderr, refused.stderr


def test_a_review_exits_with_what_its_check_found(world):
    review = ("deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    ok = world.yield_(*review)
    assert ok.code == 0 and ok.json()["simulation"]["ok"] and ok.json()["effect"]["differences"] == []
    unreachable = world.run(*review, env={**world.env(), "YIELD_RPC_URL": "http://127.0.0.1:9"})
    assert unreachable.code == 6 and "not checked" in unreachable.stderr, unreachable.stderr
    assert unreachable.json()["simulation"]["skipped"] and unreachable.json()["review"]  # the review is still printed
    unchecked = world.yield_(*review, "--no-simulate")
    assert unchecked.code == 10 and "not checked" in unchecked.stderr and unchecked.json()["transaction"]
    world.doctor(amount_changed)
    mismatch = world.yield_("deposit", "--asset", "USDC", "--amount", "10", "-o", "json")
    assert mismatch.code == 10 and "expected -10 USDC, simulated -1,000 USDC" in mismatch.stderr
    world.doctor(
        lambda ixs: ixs + [transfer(TransferParams(from_pubkey=WALLET, to_pubkey=world.stranger, lamports=10**18))]
    )
    failed = world.yield_(*review)
    assert failed.code == 11 and "simulation failed" in failed.stderr and failed.json()["simulation"]["ok"] is False
