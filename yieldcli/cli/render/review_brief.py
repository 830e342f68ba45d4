"""An instruction in brief, for the review that fits a screen: its details without what the account
lines say again, amounts in token units with their symbol, and its accounts by what they may do
(sign, be written, be read), each named by its role. `-v` draws the whole instruction instead.

Pure text: `review_view` draws it, so the two never import each other.
"""

from __future__ import annotations

from typing import Any

from yieldcli import tokens
from yieldcli.addresses import is_pubkey
from yieldcli.amounts import format_units
from yieldcli.cli.render.layout import short_id
from yieldcli.cli.render.text import printable

LAMPORT_DECIMALS = 9
LONG_VALUE = 24  # a value longer than this that is no amount (a hash in hex) is shortened like an address


def _amount(raw: int, decimals: int | None, mint: str | None) -> str:
    """`10 USDC`; base units only when the decimals are unknown (neither decoded nor a known token's)."""
    known = tokens.by_mint(mint or "")
    if decimals is None and known is not None:
        decimals = known.decimals
    name = known.symbol if known else (short_id(mint) if mint else "")
    if decimals is None:
        return f"{raw:,} base units" + (f" of {name}" if name else "")
    return f"{format_units(raw, decimals, min_fraction=0)} {name}".rstrip()


def detail_items(ix: dict[str, Any], *, shorten: bool = True) -> list[str]:
    """`amount: 10 USDC`, `strategy_key: 0a4c…83c7`: the details the account lines do not already say
    (addresses and long values shortened in the middle with `shorten`)."""
    details = dict(ix.get("details") or {})
    addresses = {a.get("address") for a in ix.get("accounts") or ()}
    said: dict[str, str] = {}  # amounts, already in words: never shortened
    amount, decimals = details.get("amount"), details.get("decimals")
    if type(amount) is int:
        details.pop("ui_amount", None)
        details.pop("decimals", None)
        mint = details.get("mint") if isinstance(details.get("mint"), str) else None
        said["amount"] = _amount(amount, decimals if type(decimals) is int else None, mint)
    if type(details.get("lamports")) is int:
        details.pop("sol", None)
        said["lamports"] = f"{format_units(details['lamports'], LAMPORT_DECIMALS, min_fraction=0)} SOL"
    items = []
    for key, value in details.items():
        if key.endswith("_escaped"):
            continue  # the JSON's escaped form of another detail: on a terminal every text is shown escaped
        if isinstance(value, str) and is_pubkey(value) and value in addresses:
            continue  # the account lines name it, with its role
        text = said.get(key) or printable(str(value))
        if shorten and key not in said and isinstance(value, str) and (is_pubkey(value) or len(text) > LONG_VALUE):
            text = short_id(text)
        items.append(f"{printable(key)}: {text}")
    return items


def account_groups(accounts: list[dict[str, Any]], *, shorten: bool = True) -> list[tuple[str, list[str]]]:
    """[("signs", ["user, payer 5PJ1…Vr9k"]), ("writes", [...]), ("reads", [...])]: each account once,
    with every role it has in the instruction, under the most it may do."""
    merged: dict[str, dict[str, Any]] = {}
    for acct in accounts:
        key = acct.get("address") or f"{acct.get('lookup_table')}#{acct.get('lookup_index')}"
        entry = merged.setdefault(key, {"acct": acct, "roles": [], "signer": False, "writable": False})
        role = acct.get("role")
        if role and role not in entry["roles"]:
            entry["roles"].append(role)
        entry["signer"] |= bool(acct.get("signer"))
        entry["writable"] |= bool(acct.get("writable"))
    groups: dict[str, list[str]] = {"signs": [], "writes": [], "reads": []}
    cut = short_id if shorten else str
    for entry in merged.values():
        acct = entry["acct"]
        if acct.get("address"):
            where = cut(printable(acct["address"]))
        else:
            where = (
                f"entry {acct.get('lookup_index')} of lookup table {cut(printable(acct.get('lookup_table') or '?'))}"
            )
        roles = printable(", ".join(entry["roles"]))
        item = f"{roles} {where}" if roles else where
        if entry["signer"]:
            groups["signs"].append(item + (" (writable)" if entry["writable"] else ""))
        else:
            groups["writes" if entry["writable"] else "reads"].append(item)
    return [(label, items) for label, items in groups.items() if items]
