"""How long a reviewed transaction stays valid, said in the question before signing, and checked again
after the yes.

A transaction lives until its blockhash passes (its last valid block height) or, built on a durable
nonce, until its nonce moves on. A person may read the review for longer than that: a yes given
after it passed never signs. The question says how long it stays valid ("valid for about 55 s");
after the yes, the transaction's own blockhash (or nonce) is asked about again before anything is
signed, and a passed one ends in `ReviewExpired`. A write built from an action's row is then built
again (`yieldcli.client.driver`): asked once more when it does the same (`effect_changes` finds
none), refused when it does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from yieldcli.chain.transact.journal import MS_PER_BLOCK, about
from yieldcli.errors import TransactionExpired

if TYPE_CHECKING:
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.guard.intent import Check
    from yieldcli.chain.transact.types import Prepared


class ReviewExpired(TransactionExpired):
    """The yes came after the transaction's blockhash passed (or its nonce moved on): nothing was signed."""

    kind = "tx.expired.review"
    last_valid_block_height: int | None = None
    block_height: int | None = None
    nonce_account: str | None = None
    prepared: Prepared | None = None  # what was reviewed: a write is built again and compared with it


# A yes this quick, with this many blocks left when the question was asked, needs no question to the
# RPC: blocks come once a slot (about 400 ms), so 40 of them cannot pass within a second. Anything
# slower (a person reading) or closer to the end is asked about (`check_after_yes`).
QUICK_YES_SECONDS = 1.0
QUICK_YES_BLOCKS_LEFT = 40


async def lifetime_text(rpc: Any, tx: VersionedTransaction, last_valid: int | None) -> tuple[str | None, int | None]:
    """What the question says about how long the transaction stays valid (None when not known: no
    RPC), and the blocks it has left (None for a durable nonce, or not known)."""
    from yieldcli.chain.transact.checks import message_of
    from yieldcli.chain.tx.nonce import nonce_lifetime

    lifetime = nonce_lifetime(message_of(tx))
    if lifetime is not None:
        return "valid until its durable nonce moves on", None
    if rpc is None or last_valid is None:
        return None, None
    height = await rpc.block_height("processed")  # asked ahead with the first exchange (`ask_ahead_for`)
    left = max(last_valid - height, 0)
    # Short: the question fits an 80-column line (the block height is in the error, should it pass).
    return f"valid for {about(left * MS_PER_BLOCK)}", left


async def check_after_yes(
    rpc: Any, prepared: Prepared, last_valid: int | None, *, answered_in: float, blocks_left: int | None
) -> None:
    """Raise `ReviewExpired` when the transaction's own blockhash is no longer valid (or its durable
    nonce moved on) now that the person said yes: it is never signed then. A yes given within
    `QUICK_YES_SECONDS` of a question asked with `QUICK_YES_BLOCKS_LEFT` blocks or more left (`--yes`,
    a script's callback) cannot come after the blockhash passed: not asked again."""
    from yieldcli.chain.transact.checks import message_of
    from yieldcli.chain.tx.nonce import nonce_lifetime, nonce_moved_on

    if rpc is None:
        return
    if blocks_left is not None and blocks_left >= QUICK_YES_BLOCKS_LEFT and answered_in < QUICK_YES_SECONDS:
        return
    tx = prepared.transaction
    lifetime = nonce_lifetime(message_of(tx))
    if lifetime is not None:
        if not await nonce_moved_on(rpc, lifetime):
            return
        error = ReviewExpired(
            f"the transaction's durable nonce (account {lifetime.account}) moved on while it was reviewed: "
            "it can no longer land; nothing was signed",
            hint="build it again on the nonce's current value, then sign it",
        )
        error.nonce_account = str(lifetime.account)
    else:
        if await rpc.is_blockhash_valid(tx.message.recent_blockhash, "processed"):
            return
        height = await rpc.block_height("processed")
        until = f"until block height {last_valid:,}" if last_valid is not None else "until its blockhash passed"
        error = ReviewExpired(
            f"the transaction's blockhash passed while it was reviewed (it was valid {until}; the chain is at "
            f"block height {height:,}): it can no longer land; nothing was signed",
            hint="build it again and answer within its lifetime (about a minute)",
        )
        error.last_valid_block_height, error.block_height = last_valid, height
    error.prepared = prepared
    raise error


def effect_changes(first: Check | None, again: Check | None) -> list[str]:
    """What the transaction built again does differently from the one reviewed (empty: the same)."""
    if first is None or again is None:
        return [] if first is again else ["the intent check could not run on one of them"]
    changes: list[str] = []
    if list(first.differences) != list(again.differences):
        changes.append("what differs from your request: " + ("; ".join(again.differences) or "nothing"))
    before, after = _moves(first), _moves(again)
    for key in sorted(set(before) | set(after), key=str):
        was, now = before.get(key), after.get(key)
        if was != now:
            changes.append(f"{key[0]}: {was[1] if was else 'no change'} -> {now[1] if now else 'no change'}")
    for name in ("fee", "rent"):
        was_amount, now_amount = first.observed.get(name), again.observed.get(name)
        if was_amount != now_amount:
            changes.append(f"{name}: {was_amount} -> {now_amount} lamports")
    return changes


def _moves(check: Check) -> dict[tuple[str, str | None], tuple[int, str]]:
    """The user's balance changes, by asset: (change in base units, as the review says it)."""
    moves: dict[tuple[str, str | None], tuple[int, str]] = {}
    for change in check.observed.get("changes") or ():
        moves[(str(change.get("asset")), change.get("mint"))] = (int(change.get("change", 0)), str(change.get("text")))
    return moves
