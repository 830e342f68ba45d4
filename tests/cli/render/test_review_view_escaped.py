"""The review shows the service's text as it is (issue 35): a memo whose bidirectional and zero-width
characters would make it read otherwise is drawn with each as `\\u{XXXX}`, in the brief review and the
whole one (`-v`); the JSON keeps the raw text and adds the escaped form."""

from __future__ import annotations

from yieldcli.solana import programs

MEMO = "refund \u202eDSU 0001\u202c to\u200b you\u2066!\u2069\x1b[2J"
SHOWN = "refund \\u{202E}DSU 0001\\u{202C} to\\u{200B} you\\u{2066}!\\u{2069}\\u{001B}[2J"
RAW = ("\u202e", "\u202c", "\u200b", "\u2066", "\u2069", "\x1b")


def test_a_memo_is_shown_escaped_on_the_terminal_and_raw_with_its_escaped_form_in_json(world):
    world.doctor(lambda ixs: [*ixs, programs.memo(MEMO, [])])
    deposit = ("deposit", "--asset", "USDC", "--amount", "10")
    for more in ((), ("-v",)):
        shown = world.run(*deposit, *more, "-o", "table", env={**world.env(), "COLUMNS": "200"})
        assert shown.code == 0, shown.stderr
        assert not any(ch in shown.stdout + shown.stderr for ch in RAW), shown.stdout
        # The brief review shortens a long value in the middle; its head is escaped all the same.
        assert (SHOWN if more else SHOWN[:10]) in shown.stdout, shown.stdout
        assert "text_escaped" not in shown.stdout
    body = world.yield_(*deposit, "-o", "json").json()
    memo = next(ix for ix in body["review"]["instructions"] if ix["kind"] == "memo")
    assert memo["details"] == {"text": MEMO, "text_escaped": SHOWN}
