"""How much of an asset a write moves, read from the simulated effect the library's check observed.

The only field used is the check's `observed["changes"]`: one entry per asset whose holdings of the
user (wallet and fee payer) change, `{"asset", "mint" (None for native SOL), "change"}` in base units
(lamports for SOL). Whatever the service's request said, this is what the transaction does.

SOL is one asset in two forms: native lamports and wrapped SOL (the SOL mint). A withdrawal that
unwraps arrives as lamports, a deposit may wrap lamports on the way in, so both forms count for the
SOL limits; the network fee, paid in lamports by the same wallet, is not the asset moved and is
added back. An amount that cannot be read is None, which the policy refuses: it is never counted as
nothing.
"""

from __future__ import annotations

from typing import Any

from yieldcli.tokens import WSOL_MINT


def moved(effect: Any, mint: str, fee: int | None, *, closing: bool = False) -> int | None:
    """Base units of `mint` the user's holdings change by, as simulated; None when not known.

    `fee`: the lamports the transaction pays the network (None when unknown). `closing`: a close of
    the strategy account, which may move nothing of the asset (its rent is SOL the user gets back)."""
    observed = getattr(effect, "observed", None)
    changes = observed.get("changes") if isinstance(observed, dict) else None
    if not isinstance(changes, list):
        return None
    total = 0
    for entry in changes:
        change = entry.get("change") if isinstance(entry, dict) else None
        if not isinstance(change, int) or isinstance(change, bool):
            return None
        which = entry.get("mint")
        if which == mint:
            total += abs(change)
        elif which is None and mint == WSOL_MINT and not closing:  # a close's lamports are its rent
            if fee is None:
                return None  # the fee cannot be told from the SOL moved
            total += abs(change + fee)
    if total == 0 and not closing:
        return None  # a deposit or withdrawal that moves none of its asset is not one we can count
    return total
