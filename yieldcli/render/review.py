"""A transaction review for people: what would be signed, by whom, doing what."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from yieldcli.amounts import format_units


def draw_effect(console: Console, effect: dict[str, Any] | None) -> None:
    """What the transaction does to the user, first: the summary, each balance change, every difference."""
    if effect is None:
        return
    console.print(effect["summary"], style="bold", markup=False, highlight=False)
    for change in effect["observed"]["changes"]:
        style = "red" if change["change"] < 0 else ("green" if change["change"] > 0 else "")
        console.print(f"  your {change['asset']}: ", end="", markup=False, highlight=False)
        console.print(change["text"], style=style or None, markup=False, highlight=False)
    if effect["differences"]:
        asked = effect["expected"]["action"] != "transaction"
        header = "  does NOT match your request:" if asked else "  more than the network fee and rent (state the intent with --expect):"
        console.print(header, style="bold red", markup=False, highlight=False)
        for difference in effect["differences"]:
            console.print(f"    ✗ {difference}", style="red", markup=False, highlight=False)
    else:
        console.print("  matches your request", style="green", markup=False, highlight=False)


def draw_review(console: Console, review: dict[str, Any], *, cluster: str, title: str) -> None:
    console.print(f"[bold]{title}[/bold]")
    console.print(f"  cluster:          {cluster}")
    console.print(f"  fee payer:        {review['fee_payer']}")
    console.print(f"  recent blockhash: {review['recent_blockhash']}")
    console.print(f"  message version:  {review['version']}")
    console.print("  signers:")
    for s in review["signers"]:
        state = "signed" if s["signed"] else ("INVALID signature" if s["invalid"] else "not signed")
        payer = " (fee payer)" if s["fee_payer"] else ""
        console.print(f"    {s['address']}{payer}: {state}")
    for ix in review["instructions"]:
        flag = "  [UNKNOWN PROGRAM]" if ix["unknown"] else ""
        kind = f" {ix['kind']}" if ix.get("kind") else ""
        console.print(f"  #{ix['index'] + 1} {ix['program']}{kind}{flag}  ({ix['program_id']})", markup=False)
        for key, value in (ix.get("details") or {}).items():
            console.print(f"      {key}: {value}", highlight=False, markup=False)
        for acct in ix["accounts"]:
            roles = [r for r in (acct.get("role"), "signer" if acct["signer"] else None, "writable" if acct["writable"] else None) if r]
            where = acct["address"] or f"lookup table {acct['lookup_table']} #{acct['lookup_index']}"
            console.print(f"      {where}  [{', '.join(roles) or 'readonly'}]", highlight=False, markup=False)
    for warning in review.get("warnings", ()):
        console.print(f"  warning: {warning}", markup=False)


def draw_simulation(console: Console, simulation: dict[str, Any] | None) -> None:
    if simulation is None:
        return
    if simulation.get("skipped"):
        console.print(f"simulation: skipped ({simulation['skipped']})")
        return
    units = simulation.get("units_consumed")
    if simulation["ok"]:
        console.print(f"simulation: success, {units} compute units")
    else:
        console.print(f"simulation: FAILED: {simulation['error']} ({units} compute units)")
        for line in simulation.get("logs", ()):
            console.print(f"    {line}", highlight=False, markup=False)
    changes = simulation.get("token_balance_changes") or []
    if changes:
        table = Table("Token account", "Owner", "Mint", "Before", "After", "Change", header_style="bold")
        for c in changes:
            d = c.get("decimals")
            fmt = (lambda v: "—" if v is None else format_units(v, d)) if d is not None else (lambda v: "—" if v is None else str(v))
            delta = c["change"]
            table.add_row(c["address"], c.get("owner") or "", c.get("mint") or "", fmt(c["before"]), fmt(c["after"]),
                          Text(("+" if delta > 0 else "") + fmt(delta), style="red" if delta < 0 else ""))
        console.print(table)
