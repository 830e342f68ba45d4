"""Plain token transfers on a deposit to a destination the user trusts (`yieldcli.trust`).

Only a deposit may use trust: value leaving a position on a withdrawal or a close goes to the user,
whoever is trusted. A plain `Transfer`/`TransferChecked` out of the user's token account is accepted
when its destination is trusted for this cluster, strategy and mint, the mint is the deposit's, and
it moves no more than the deposit (the amount rule still wants the user's balance to fall by exactly
the amount asked). The destination's mint is read again from the chain by the value check: an
account closed and opened again for another token is not the one trusted.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from yieldcli.chain.guard.kinds import kind_of
from yieldcli.trust import load_trusted, trusted_for

if TYPE_CHECKING:
    from yieldcli.chain.guard.intent import Intent

TRUSTED_NOTE = "trusted by you for this strategy on this cluster"
UNTRUSTED_NOTE = "a destination you have not trusted for this strategy on this cluster"


def trusted_destinations(intent: Intent, genesis_hash: str) -> tuple[tuple[str, str], ...]:
    """The destinations trusted for this deposit: (token account, mint) pairs from the trust file."""
    if not kind_of(intent).trusted_transfers or not intent.trust_file or not intent.strategy or not intent.mint:
        return ()

    found = trusted_for(load_trusted(Path(intent.trust_file)), genesis_hash, intent.strategy, intent.mint)
    return tuple(sorted(found.items()))
