"""A write whose review outlived its transaction, and a send interrupted once it went out.

`complete_or_rebuild` completes a prepared write as `engine.complete` does; when the yes came after
the transaction's blockhash passed (or its durable nonce moved on: `ReviewExpired`, nothing signed),
a write of the action rows is built again (`rebuilder`: the service asked anew, reviewed and checked
as the first) and, doing the same, asked once more; doing otherwise, refused with what changed. A
transaction handed over cannot be built again: the error is the caller's.

`raise_if_sent`: an interruption (Ctrl-C, a cancelled task) once an outcome with a sent signature was
reached raises `SentThenInterrupted` naming it, never a bare KeyboardInterrupt that loses it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from yieldcli.chain.transact.engine import Hooks, Prepared, complete, prepare
from yieldcli.chain.transact.lifetime import ReviewExpired, effect_changes
from yieldcli.chain.transact.outcomes import SentThenInterrupted, with_report, with_signature
from yieldcli.errors import Refused

if TYPE_CHECKING:
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.journal import Journal
    from yieldcli.chain.transact.outcomes import Outcome
    from yieldcli.chain.transact.types import Obtain, TransactOptions, UserRequest

Rebuild = Callable[[Any, "TransactOptions"], Awaitable["Prepared | Outcome"]]  # (rpc, options) -> built again


def rebuilder(rpc_url: str, request: UserRequest, obtain: Obtain, signers: Callable[[], Sequence[Signer]]) -> Rebuild:
    """How to build a write from an action's row again (the service asked anew), reviewed and checked
    as the first one was; nothing signed."""

    async def rebuild(rpc: Any, options: TransactOptions) -> Prepared | Outcome:
        return await prepare(rpc, rpc_url, request, obtain, options, Hooks(), signers)

    return rebuild


async def complete_or_rebuild(
    rpc: Any, prepared: Prepared, hooks: Hooks, journal: Journal | None, rebuild: Rebuild | None
) -> Outcome:
    """Complete `prepared`; when the yes came after its blockhash passed (or its nonce moved on) and it
    is a write of the rows (`rebuild`), build it again: doing the same, the question is asked once
    more (never signed without a new yes); doing otherwise, refused, saying what changed. A
    transaction handed over (`rebuild` None) ends in the error, with nothing signed."""
    try:
        return await complete(rpc, prepared, hooks, journal)
    except ReviewExpired as expired:
        if rebuild is None or rpc is None:
            raise
        hooks.log(f"built again: {expired.message}")
        again = await rebuild(rpc, prepared.options)
        if not isinstance(again, Prepared):
            return again
        changes = effect_changes(prepared.effect, again.effect)
        if changes:
            raise with_report(
                Refused(
                    "the transaction expired while it was reviewed, and the one built again does not do the "
                    f"same: {'; '.join(changes)}; nothing was signed",
                    hint="run the command again to review the new transaction",
                    kind="refused.rebuilt.changed",
                ),
                again.result,
                "refused",
            ) from None
        note = "It expired while it was reviewed; built again, it does the same.\n"
        # The review was drawn already: the question is asked again, of the new transaction.
        return await complete(rpc, again, replace(hooks, on_review=lambda _: None), journal, again=note)


def raise_if_sent(outcome: Outcome | None) -> None:
    """Interrupted once `outcome` was reached: when it carries a sent signature, raise the error that
    names it (`SentThenInterrupted`), never a bare KeyboardInterrupt or cancellation that loses it."""
    signature = outcome.result.get("signature") if outcome is not None else None
    if outcome is None or not signature or outcome.status in ("signed", "partially-signed", "unsigned"):
        return
    error = SentThenInterrupted(
        f"interrupted after sending {signature} (it was {outcome.status} when interrupted)",
        kind="tx.interrupted",
    )
    raise with_report(with_signature(error, str(signature)), outcome.result, outcome.status) from None
