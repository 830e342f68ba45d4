"""The transaction review drawn in-process from hand-made results: the effect and the fee first,
addresses shortened only when a line would not fit, amounts whole, losses red, no line too wide."""

import io
import re

import pytest
from rich.console import Console

from yieldcli.cli.render import review_view as review

WALLET = "5PJ1rhA862Qd39y7bTWTRvQN4bqSFnyV82EDgH4kVr9k"
USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOURCE = "7tndHCqX6xh9jSoy3eaXe7VgPkfciMjnWr6zSEF6gv7z"
VAULT = "EMcdQ58qSeKnzvCUrLFEeWhNkWzwwrmbgAv6G5BSVEiT"
TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
BUDGET = "ComputeBudget111111111111111111111111111111"
TABLE = "D8hiXfWdwFmNePuAjFCbf6y5S5Vos91p8hdkTXBRwVSZ"
U128_MAX = 2**128 - 1
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def account(address, role, signer=False, writable=False, table=None, index=None):
    return {
        "address": address,
        "role": role,
        "signer": signer,
        "writable": writable,
        "lookup_table": table,
        "lookup_index": index,
    }


def result(*, fee=None, summary=None, before=1_250_750_000, change=-10_000_000, differences=()):
    return {
        "cluster": "http://127.0.0.1:8899",
        "fee": fee,
        "effect": {
            "summary": summary
            or "deposit 10 USDC from 5PJ1…Vr9k to strategy sandbox-0000-4000-8000-000000000001; fee 0.000005551 SOL",
            "expected": {"action": "deposit"},
            "observed": {
                "changes": [
                    {"asset": "SOL", "change": -5551, "text": "-0.000005551 SOL"},
                    {"asset": "USDC", "change": change, "text": "-10 USDC"},
                ]
            },
            "differences": list(differences),
        },
        "review": {
            "fee_payer": WALLET,
            "recent_blockhash": "4Hsom1GPpwcqtyfPxd31D5yfDNMdB69TqgGnsKvNTEvh",
            "version": 0,
            "signers": [{"address": WALLET, "signed": False, "invalid": False, "fee_payer": True}],
            "instructions": [
                {
                    "index": 0,
                    "program": "Compute Budget Program",
                    "program_id": BUDGET,
                    "kind": "setComputeUnitPrice",
                    "unknown": False,
                    "details": {"micro_lamports": 2755},
                    "accounts": [],
                },
                {
                    "index": 1,
                    "program": "Token Program",
                    "program_id": TOKEN_PROGRAM,
                    "kind": "transferChecked",
                    "unknown": False,
                    "details": {"source": SOURCE, "mint": USDC, "amount": 10_000_000, "ui_amount": "10.000000"},
                    "accounts": [
                        account(SOURCE, "source", writable=True),
                        account(None, "mint", table=TABLE, index=15),
                        account(VAULT, "destination", writable=True),
                        account(WALLET, "authority", signer=True, writable=True),
                    ],
                },
            ],
            "warnings": [],
        },
        "simulation": {
            "ok": True,
            "units_consumed": 784,
            "token_balance_changes": [
                {
                    "address": SOURCE,
                    "owner": WALLET,
                    "mint": USDC,
                    "decimals": 6,
                    "before": before,
                    "after": before + change,
                    "change": change,
                },
            ],
        },
    }


FEE = {"base": 5000, "priority": 551, "total": 5551, "compute_unit_limit": 200_000, "compute_unit_price": 2755}


def draw(width, res, *, colour=False, full=False):
    console = Console(
        file=io.StringIO(),
        width=width,
        force_terminal=colour,
        color_system="standard" if colour else None,
        highlight=False,
    )
    # in the order the deposit flow draws them
    review.draw_effect(console, res["effect"], res.get("fee"))
    review.draw_review(console, res["review"], cluster="sandbox", title="Review: deposit", full=full)
    review.draw_simulation(console, res["simulation"], full=full)
    return console.file.getvalue()


def plain_lines(text):
    return ANSI.sub("", text).rstrip("\n").split("\n")


def test_the_effect_and_the_fee_come_first_and_the_fee_adds_up():
    lines = plain_lines(draw(80, result(fee=FEE)))
    assert lines[0] == "deposit 10 USDC from 5PJ1…Vr9k to strategy sandbox-0000-4000-8000-000000000001"
    assert lines[1] == "  fee 0.000005551 SOL = base 0.000005 + priority 0.000000551"  # said once, with its parts
    assert "    up to 200,000 compute units at 2,755 micro-lamports each" in lines
    title = next(i for i, line in enumerate(lines) if line.startswith("Review: deposit on sandbox"))
    assert title > lines.index("  matches your request")
    # The flow's summary names the priority part too: still said once, the line with its parts.
    with_priority = result(
        fee=FEE, summary="deposit 10 USDC from 5PJ1…Vr9k to strategy S; fee 0.000005551 SOL (priority 0.000000551)"
    )
    assert sum("fee 0.000005551" in line for line in plain_lines(draw(200, with_priority))) == 1


def test_no_fee_line_without_a_fee_or_with_one_that_is_not_whole_lamports():
    assert "= base" not in draw(200, result())
    assert "= base" not in draw(200, result(fee={"base": 5000.0, "priority": 1, "total": "5551"}))
    partial = plain_lines(draw(200, result(fee={"total": 5000})))
    assert "  fee 0.000005 SOL" in partial and not any("compute units at" in line for line in partial)


def test_at_80_columns_no_line_is_wider_and_addresses_are_shortened_only_where_needed():
    text = draw(80, result(fee=FEE), full=True)
    lines = plain_lines(text)
    assert max(map(len, lines)) <= 80, "\n".join(lines)
    # A line that fits keeps the whole address; one that would not fit has it shortened in the middle.
    assert f"  fee payer:        {WALLET}" in lines
    assert "      source: " + SOURCE in lines
    token_row = next(line for line in lines if line.startswith("7tnd"))
    assert token_row.split()[:5] == ["7tnd…gv7z", "USDC", "1,250.75", "1,240.75", "-10.00"]
    # the account loaded from a lookup table is named by its table and entry
    assert any(line.split()[0] == "D8hi…wVSZ" and "entry 15 of this lookup table" in line for line in lines)


def test_at_200_columns_every_address_is_whole():
    lines = plain_lines(draw(200, result(fee=FEE), full=True))
    token_row = next(line for line in lines if line.startswith(SOURCE))
    assert token_row.split() == [SOURCE, "USDC", "1,250.75", "1,240.75", "-10.00", USDC, WALLET]
    assert any(line.split()[0] == TABLE and "entry 15 of this lookup table" in line for line in lines)
    assert not any("…" in line for line in lines[1:])  # only the service's own summary shortens the wallet


@pytest.mark.parametrize("full", [False, True])
def test_a_huge_amount_is_never_cut_even_when_the_row_cannot_fit(full):
    text = "\n".join(plain_lines(draw(40, result(before=U128_MAX - 5, change=-(2**100)), full=full)))
    assert "340,282,366,920,938,463,463,374,607,431,768.21145" in text
    assert "-1,267,650,600,228,229,401,496,703.205376" in text
    assert not re.search(r"[\d,.]…|…[\d,.]", re.sub(r"\b\w{4}…\w{4}\b", "", text))  # only addresses are shortened


def test_in_brief_an_instruction_names_its_accounts_by_what_they_may_do_and_its_amount_in_token_units():
    lines = plain_lines(draw(80, result(fee=FEE)))
    assert lines[lines.index("  #2 Token Program transferChecked  " + TOKEN_PROGRAM) + 1 :][:4] == [
        f"      mint: {USDC}; amount: 10 USDC",  # named: its account comes from a lookup table
        f"      signs: authority {WALLET} (writable)",  # a line that fits keeps its addresses whole
        "      writes: source 7tnd…gv7z, destination EMcd…VEiT",  # one that would not, shortened
        "      reads: mint entry 15 of lookup table D8hi…wVSZ",
    ]
    assert "  fee payer " + WALLET + ": not signed" in lines
    assert not any(line.lstrip().startswith(("source:", "ui_amount:", "Account ")) for line in lines)


def test_in_brief_short_details_ride_on_the_verdict_line_and_long_ones_wrap_between_items():
    res = result()
    verdicts = [
        {"index": 0, "ok": True, "reason": "sets the fee and compute limit"},
        {"index": 1, "ok": True, "reason": "a transfer from your token account to the vault"},
    ]
    res["review"]["instructions"][1]["details"]["memo"] = "m" * 70  # no address, no amount: shortened too
    console = Console(file=io.StringIO(), width=80, color_system=None, highlight=False)
    review.draw_review(console, res["review"], cluster="sandbox", title="Review: deposit", verdicts=verdicts)
    lines = plain_lines(console.file.getvalue())
    assert "      ✓ sets the fee and compute limit; micro_lamports: 2755" in lines
    at = lines.index("      ✓ a transfer from your token account to the vault")
    assert lines[at + 1] == "      mint: EPjF…Dt1v; amount: 10 USDC; memo: mmmm…mmmm"
    narrow = Console(file=io.StringIO(), width=50, color_system=None, highlight=False)
    review.draw_review(narrow, res["review"], cluster="sandbox", title="Review: deposit", verdicts=verdicts)
    lines = plain_lines(narrow.file.getvalue())
    at = lines.index("      mint: EPjF…Dt1v; amount: 10 USDC;")  # wrapped between items, hanging
    assert lines[at + 1] == "        memo: mmmm…mmmm"


def test_losses_are_red_gains_green():
    text = draw(80, result(fee=FEE), colour=True)
    assert re.search(r"\x1b\[31m\s*-10\.00", text)  # the simulated change
    assert re.search(r"\x1b\[31m-10 USDC", text)  # the effect on the user
    assert "\x1b[32m  matches your request" in text
    gain = draw(80, result(change=7_000_000), colour=True)
    assert re.search(r"\x1b\[32m\s*-10 USDC", gain) and "+7.00" in ANSI.sub("", gain)


def test_a_long_summary_is_split_at_its_parts_not_wherever_a_word_ends():
    head = "withdraw 2,500 USDC from strategy sandbox-0000-4000-8000-000000000001 to 5PJ1…Vr9k"
    lines = plain_lines(draw(90, result(summary=f"{head}; fee 0.000005 SOL; rent 0.00203928 SOL")))
    assert lines[:3] == [head, "  fee 0.000005 SOL", "  rent 0.00203928 SOL"]


def test_text_from_the_service_cannot_move_the_cursor_or_colour_the_screen():
    res = result(summary="deposit 10 USDC\x1b[2J\x1b[32m all good", differences=["\x1b[0mhidden\rover"])
    res["review"]["instructions"][1]["program"] = "Token\x1b[1A Program"
    text = draw(80, res, colour=True)
    assert "\x1b[2J" not in text and "\x1b[1A" not in text and "\r" not in text
    assert "hidden" in text and "does NOT match your request" in text


def test_a_summary_head_wider_than_the_screen_continues_on_indented_lines():
    head = "close the USDC fund account of 5PJ1…Vr9k in strategy sandbox-0000-4000-8000-000000000001"
    lines = plain_lines(draw(80, result(summary=f"{head}; fee 0.000005 SOL")))
    assert lines[:3] == [
        "close the USDC fund account of 5PJ1…Vr9k in strategy",
        "    sandbox-0000-4000-8000-000000000001",
        "  fee 0.000005 SOL",
    ]


def test_fit_line_shortens_only_addresses_and_only_when_needed():
    from yieldcli.cli.render.layout import Address, fit_line

    assert (
        fit_line(80, "payer ", Address(WALLET), " pays 1,234,567.891 USDC") == f"payer {WALLET} pays 1,234,567.891 USDC"
    )
    assert (
        fit_line(40, "payer ", Address(WALLET), " pays 1,234,567.891 USDC") == "payer 5PJ1…Vr9k pays 1,234,567.891 USDC"
    )
    # still too wide: the amount stays whole and the terminal wraps the line
    assert fit_line(10, "payer ", Address(WALLET), " pays 1,234,567.891") == "payer 5PJ1…Vr9k pays 1,234,567.891"


def test_a_transaction_signed_by_all_with_no_intent_says_what_it_does_without_a_mismatch():
    res = result(differences=["your USDC falls by 10 USDC, not asked for"])
    res["effect"]["expected"]["action"] = "transaction"
    console = Console(file=io.StringIO(), width=80, color_system=None, highlight=False)
    review.draw_effect(console, res["effect"], None, signed_by_all=True)
    lines = plain_lines(console.file.getvalue())
    assert lines[-2:] == [
        "  every signature is there already: it is sent as it is, nothing is signed here",
        "    • your USDC falls by 10 USDC, not asked for",
    ]
    console = Console(file=io.StringIO(), width=80, color_system=None, highlight=False)
    review.draw_effect(console, res["effect"], None)  # to be signed here: the intent must be stated
    assert "  more than the network fee (state the intent with --expect):" in plain_lines(console.file.getvalue())


def test_what_could_not_be_verified_is_said_in_one_line():
    # A strategy program whose layout is not public (mainnet): the guard says what it could not prove.
    res = result()
    res["effect"]["unverified"] = ["the position's change: the strategy program's account layout is not public"]
    console = Console(file=io.StringIO(), width=120, color_system=None, highlight=False)
    review.draw_effect(console, res["effect"], None)
    lines = plain_lines(console.file.getvalue())
    said = [line for line in lines if line.startswith("  not verified:")]
    assert said == ["  not verified: the position's change: the strategy program's account layout is not public"]
