"""A transaction review for people: what would be signed, by whom, doing what.

It fits the terminal the way tables do (`layout.py`): addresses are shortened in the middle only
when a line would not fit, amounts are never cut, tables never wrap a row. Everything shown comes
from a transaction the service built, so every piece of text goes through `printable`.
"""

from __future__ import annotations

import textwrap
from decimal import Decimal
from typing import Any

from rich.cells import cell_len
from rich.console import Console

from yieldcli import tokens
from yieldcli.addresses import is_pubkey
from yieldcli.amounts import format_units
from yieldcli.chain.guard.kinds import kind_named
from yieldcli.cli.render import layout
from yieldcli.cli.render import review_brief as brief
from yieldcli.cli.render.layout import Address, Column
from yieldcli.cli.render.text import printable

LAMPORTS_PER_SOL = 9  # decimals of SOL
DETAIL_INDENT = 6


def _say(console: Console, text: str, style: str | None = None) -> None:
    console.print(text, style=style, markup=False, highlight=False)


def _line(console: Console, *pieces: str, style: str | None = None) -> None:
    _say(
        console, layout.fit_line(console.width, *(p if isinstance(p, Address) else printable(p) for p in pieces)), style
    )


def _addr(text: str | None) -> Address:
    return Address(printable(text or "?"))


def sol(lamports: int) -> str:
    """Lamports as SOL with every significant digit: `0.000005551`."""
    text = format(Decimal(lamports).scaleb(-LAMPORTS_PER_SOL), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def effect_summary(effect: dict[str, Any]) -> str:
    """The check's one-line summary; closing an account also says what comes back to the user
    (`close the USDT fund account of 5PJ1…Vr9k in …: +1,218.904117 USDT and +0.00203428 SOL back to you`)."""
    text = str(effect["summary"])
    if not kind_named(effect["expected"]["action"]).closes:
        return text
    gains = [c for c in effect["observed"]["changes"] if isinstance(c.get("change"), int) and c["change"] > 0]
    back = [str(c["text"]) for c in sorted(gains, key=lambda c: c.get("mint") is None)]  # the position, then SOL
    if not back:
        return text
    head, sep, rest = text.partition("; ")
    return f"{head}: {' and '.join(back)} back to you{sep}{rest}"


def draw_summary(console: Console, effect: dict[str, Any], fee: dict[str, Any] | None = None) -> None:
    """The check's summary on one line when it fits; otherwise one part a line (`deposit …`, `  fee …`),
    a long head wrapped on indented lines, so the screen never breaks it mid-word. Given `fee`, the
    summary's `fee X SOL` is left out: `draw_fee` says it again with its parts just below."""
    parts = printable(effect_summary(effect)).split("; ")
    if fee is not None and fee_line(fee):
        parts = [p for p in parts if not p.startswith(f"fee {sol(fee['total'])} SOL")] or parts
    if cell_len("; ".join(parts)) <= console.width:
        _say(console, "; ".join(parts), "bold")
        return
    for line in textwrap.wrap(
        parts[0], console.width, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False
    ):
        _say(console, line, "bold")
    for part in parts[1:]:
        _say(console, f"  {part}", "bold")


def draw_effect(
    console: Console, effect: dict[str, Any] | None, fee: dict[str, Any] | None = None, *, signed_by_all: bool = False
) -> None:
    """What the transaction does to the user, first: the summary, the fee, each balance change, every difference.
    `signed_by_all`: nothing will be signed, so with no intent stated what it does is said, not held against it."""
    if effect is not None:
        draw_summary(console, effect, fee)
    draw_fee(console, fee)
    if effect is None:
        return
    _draw_changes(console, effect["observed"]["changes"])
    for unproven in effect.get("unverified", ()):  # a strategy program whose layout is not public
        _say(console, f"  not verified: {printable(unproven)}", "yellow")
    if effect["differences"]:
        asked = kind_named(effect["expected"]["action"]).asset  # an action was stated
        if not asked and signed_by_all:
            _say(console, "  every signature is there already: it is sent as it is, nothing is signed here", "yellow")
            for difference in effect["differences"]:
                _say(console, f"    • {printable(difference)}")
            return
        header = (
            "  does NOT match your request:"
            if asked
            else "  more than the network fee (state the intent with --expect):"
        )
        _say(console, header, "bold red")
        for difference in effect["differences"]:
            _say(console, f"    ✗ {printable(difference)}", "red")
    else:
        _say(console, "  matches your request", "green")


def fee_line(fee: dict[str, Any] | None) -> str | None:
    """`fee 0.000005551 SOL = base 0.000005 + priority 0.000000551` (and the signatures precompile
    instructions declare, each charged as a signature: `+ precompile signatures 0.00026`); None without
    a fee in lamports."""
    if not fee or type(fee.get("total")) is not int:
        return None
    line = f"fee {sol(fee['total'])} SOL"
    parts = [(name, fee.get(key)) for name, key in (("precompile signatures", "precompile"), ("priority", "priority"))]
    shown = [f"{name} {sol(value)}" for name, value in parts if type(value) is int and value]
    if type(fee.get("base")) is int and shown:
        line += f" = base {sol(fee['base'])} + " + " + ".join(shown)
    return line


def draw_fee(console: Console, fee: dict[str, Any] | None) -> None:
    """The fee and its parts, and what the priority pays for."""
    line = fee_line(fee)
    if fee is None or line is None:
        return
    _say(console, f"  {line}")
    limit, price = fee.get("compute_unit_limit"), fee.get("compute_unit_price")
    if type(limit) is int and type(price) is int and price:
        _say(console, f"    up to {limit:,} compute units at {price:,} micro-lamports each", "dim")


def _draw_changes(console: Console, changes: list[dict[str, Any]]) -> None:
    """`your USDC: -10 USDC`, one a line, labels and whole parts aligned so the points line up."""
    labels = [f"your {printable(c['asset'])}:" for c in changes]
    texts = [printable(c["text"]) for c in changes]
    wholes = [t.split(" ", 1)[0].split(".", 1)[0] for t in texts]
    label_width = max(map(len, labels), default=0)
    whole_width = max(map(len, wholes), default=0)
    for change, label, text, whole in zip(changes, labels, texts, wholes, strict=True):
        style = "red" if change["change"] < 0 else ("green" if change["change"] > 0 else None)
        console.print(f"  {label.ljust(label_width)} ", end="", markup=False, highlight=False)
        _say(console, " " * (whole_width - len(whole)) + text, style)


def draw_review(
    console: Console,
    review: dict[str, Any],
    *,
    cluster: str,
    title: str,
    verdicts: list[dict[str, Any]] | None = None,
    full: bool = False,
    judged: bool = True,
) -> None:
    """The transaction: who signs, and each instruction with the intent guard's verdict on it (when checked;
    `judged` False: signed by all already and no intent stated, so a verdict is said, never a ✗).

    In brief by default, to fit a screen: the cluster, version and blockhash on the title's line,
    each instruction's accounts by what they may do; `full` (-v) adds every detail and account."""
    by_index = {v["index"]: v for v in verdicts or ()}
    if full:
        _say(console, title, "bold")
        _line(console, "  cluster:          ", cluster)
        _line(console, "  fee payer:        ", _addr(review["fee_payer"]))
        _line(console, "  recent blockhash: ", _addr(review["recent_blockhash"]))
        _line(console, f"  message version:  {review['version']}")
        _say(console, "  signers:")
    else:
        head = f"{title} on {cluster} (message v{review['version']}, blockhash "
        _line(console, head, _addr(review["recent_blockhash"]), ")", style="bold")
    for s in review["signers"]:
        state = "signed" if s["signed"] else ("INVALID signature" if s["invalid"] else "not signed")
        if full:
            payer = " (fee payer)" if s["fee_payer"] else ""
            _line(console, "    ", _addr(s["address"]), f"{payer}: {state}", style="red" if s["invalid"] else None)
        else:
            who = "  fee payer " if s["fee_payer"] else "  signer "
            _line(console, who, _addr(s["address"]), f": {state}", style="red" if s["invalid"] else None)
    for ix in review["instructions"]:
        _draw_instruction(console, ix, by_index.get(ix["index"]), full=full, judged=judged)
    for warning in review.get("warnings", ()):
        _say(console, f"  warning: {printable(warning)}", "yellow")


def _packed(console: Console, head: str, items: list[str], sep: str) -> None:
    """`head` then the items joined by `sep`, wrapped between items (never inside one), hanging under
    the head's margin."""
    margin = " " * (len(head) - len(head.lstrip()) + 2)
    line = head
    for n, item in enumerate(items):
        piece = item + (sep if n < len(items) - 1 else "")
        if line != head and cell_len(line + piece.rstrip()) > console.width:
            _say(console, line.rstrip())
            line = margin
        line += piece
    _say(console, line.rstrip())


def _draw_instruction(
    console: Console,
    ix: dict[str, Any],
    verdict: dict[str, Any] | None = None,
    *,
    full: bool = True,
    judged: bool = True,
) -> None:
    kind = f" {ix['kind']}" if ix.get("kind") else ""
    unknown = "  UNKNOWN PROGRAM" if ix["unknown"] else ""
    _line(
        console,
        f"  #{ix['index'] + 1} {ix['program']}{kind}  ",
        _addr(ix["program_id"]),
        unknown,
        style="bold red" if ix["unknown"] else "bold",
    )
    margin = " " * DETAIL_INDENT
    items: list[str] = []
    groups: list[tuple[str, list[str]]] = []
    if not full:
        # Each line with whole addresses when it fits the screen, else with them shortened in the middle.
        whole_items, short_items = brief.detail_items(ix, shorten=False), brief.detail_items(ix)
        items = whole_items if cell_len(margin + "; ".join(whole_items)) <= console.width else short_items
        groups = [
            whole if cell_len(f"{margin}{whole[0]}: {', '.join(whole[1])}") <= console.width else short
            for whole, short in zip(
                brief.account_groups(ix["accounts"], shorten=False), brief.account_groups(ix["accounts"]), strict=True
            )
        ]
    if verdict is not None:  # the text says `instruction N: …` for a refusal; here the header already numbers it
        reason = printable(str(verdict["reason"]).removeprefix(f"instruction {verdict['index'] + 1}: "))
        mark, style = ("✓", "green") if verdict["ok"] else (("✗", "red") if judged else ("•", None))
        tail = "; " + "; ".join(items)
        if items and cell_len(f"{margin}{mark} {reason}{tail}") <= console.width:
            # Short details ride on the verdict's line: `✓ sets the fee and compute limit; units: 200000`.
            console.print(f"{margin}{mark} {reason}", style=style, end="", markup=False, highlight=False)
            _say(console, tail)
            items = []
        else:
            # A reason is never cut (it says why something is refused): wrapped to the screen, hanging under the mark.
            _say(
                console,
                textwrap.fill(
                    reason,
                    width=max(console.width, 40),
                    initial_indent=f"{margin}{mark} ",
                    subsequent_indent=f"{margin}  ",
                    break_long_words=False,
                    break_on_hyphens=False,
                ),
                style,
            )
    if not full:
        if items:
            _packed(console, margin, items, "; ")
        for label, accounts in groups:
            _packed(console, f"{margin}{label}: ", accounts, ", ")
        return
    details = ix.get("details") or {}
    for key, value in details.items():
        if key.endswith("_escaped"):
            continue  # the JSON's escaped form of another detail: `printable` escapes every text drawn here
        shown = _addr(value) if isinstance(value, str) and is_pubkey(value) else str(value)
        if key == "ui_amount" and isinstance(details.get("amount"), int) and isinstance(details.get("decimals"), int):
            # Written as every other amount for people (grouped, trimmed); JSON keeps the RPC's text.
            shown = format_units(details["amount"], details["decimals"], min_fraction=0)
        if isinstance(shown, Address) or cell_len(f"{margin}{key}: {shown}") <= console.width:
            _line(console, f"{margin}{key}: ", shown)
        else:  # a long value that is no address (a hash in hex): wrapped hanging under itself, never cut
            head = f"{margin}{key}: "
            _say(
                console,
                textwrap.fill(
                    printable(shown),
                    width=max(console.width, 40),
                    initial_indent=head,
                    subsequent_indent=" " * len(head),
                    break_on_hyphens=False,
                ),
            )
    accounts = ix["accounts"]
    if not accounts:
        return
    roles = []
    for acct in accounts:
        role = [
            r
            for r in (acct.get("role"), "signer" if acct["signer"] else None, "writable" if acct["writable"] else None)
            if r
        ]
        if not acct["address"]:
            role.append(f"entry {acct['lookup_index']} of this lookup table")
        roles.append(printable(", ".join(role) or "readonly"))
    layout.draw(
        console,
        [
            Column("Account", [printable(a["address"] or a["lookup_table"] or "?") for a in accounts], address=True),
            Column("Role", roles),
        ],
        indent=DETAIL_INDENT,
    )


def draw_simulation(console: Console, simulation: dict[str, Any] | None, *, full: bool = False) -> None:
    """Its verdict and compute units, the logs when it failed, the user's token balances before and after
    (titled on a line of its own with `full`, else announced on the verdict's line)."""
    if simulation is None:
        return
    if simulation.get("skipped"):
        _say(console, f"simulation: skipped ({printable(simulation['skipped'])})", "yellow")
        return
    units = simulation.get("units_consumed")
    changes = simulation.get("token_balance_changes") or []
    if simulation["ok"]:
        announce = "; your token balances:" if changes and not full else ""
        _say(console, f"simulation: success, {units} compute units{announce}")
    else:
        _say(console, f"simulation: FAILED: {printable(str(simulation['error']))} ({units} compute units)", "bold red")
        for line in simulation.get("logs", ()):
            _say(console, f"    {printable(line)}")
    if changes:
        _draw_token_changes(
            console, changes, title="Token balances (simulated)" if full or not simulation["ok"] else None
        )


def _draw_token_changes(console: Console, changes: list[dict[str, Any]], *, title: str | None) -> None:
    """Each token account of the user before and after: exact amounts, decimal points in a column."""

    def amounts(field: str) -> list[str]:
        cells = []
        for c in changes:
            value = c[field]
            cells.append(None if value is None else (value, c["decimals"] or 0))
        texts = layout.amounts(cells)
        if field == "change":  # a gain says so; a loss is red
            texts = [("+" + t) if c["change"] > 0 else t for c, t in zip(changes, texts, strict=True)]
        return texts

    def asset(c: dict[str, Any]) -> str:
        known = tokens.by_mint(c.get("mint") or "")
        if c["decimals"] is None:
            return "base units"
        return known.symbol if known else "?"

    deltas = [c["change"] for c in changes]
    layout.draw(
        console,
        [
            Column("Token account", [printable(c["address"]) for c in changes], address=True),
            Column("Asset", [asset(c) for c in changes]),
            Column("Before", amounts("before"), right=True),
            Column("After", amounts("after"), right=True),
            Column("Change", amounts("change"), right=True, styles=layout.negative_red(deltas)),
            Column("Mint", [printable(c.get("mint") or "") for c in changes], address=True, drop=2),
            Column("Owner", [printable(c.get("owner") or "") for c in changes], address=True, drop=1),
        ],
        title=title,
    )
