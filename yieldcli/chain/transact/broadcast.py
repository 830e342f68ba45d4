"""Send a signed transaction once, wait for it, and end in one outcome; its signature is never lost.

Before the send: settle the journal's earlier entries for this wallet and cluster, then claim the
journal under its lock. After the send, any interruption or error still ends with the signature:
a pending outcome, or an error that carries it (`signature`), the result so far in `report`.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from yieldcli.chain.rpc.cluster_identity import check_same_cluster, cluster_named
from yieldcli.chain.transact.consent import said_yes
from yieldcli.chain.transact.journal import new_entry, rpc_key
from yieldcli.chain.transact.outcomes import (
    Confirmed,
    Expired,
    Failed,
    Outcome,
    Pending,
    Result,
    Sent,
    SentThenInterrupted,
    Waited,
    with_report,
    with_signature,
)
from yieldcli.chain.transact.proof import Lifetime, RpcDisagrees, Witness
from yieldcli.chain.transact.settle import Settled, settle
from yieldcli.errors import (
    ConfigError,
    Declined,
    Refused,
    TransactionExpired,
    TransactionFailed,
    TransactionPending,
    YieldError,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from solders.transaction import VersionedTransaction

    from yieldcli.chain.transact import confirm
    from yieldcli.chain.transact.journal import InFlight, Journal
    from yieldcli.chain.transact.types import Hooks, TransactOptions, UserRequest


async def send_and_wait(
    rpc: Any,
    rpc_url: str,
    journal: Journal,
    request: UserRequest,
    options: TransactOptions,
    hooks: Hooks,
    tx: VersionedTransaction,
    last_valid: int | None,
    result: Result,
) -> Outcome:
    from yieldcli.chain.rpc.adapter import AlreadyProcessed

    # The cluster again, cheaply (its genesis hash is cached): an RPC unreachable before the simulation
    # was not checked. Not the blockhash: after a long prompt it may have expired, which the wait proves.
    cluster = await check_same_cluster(rpc, tx, options.expected_cluster, blockhash=False)
    wallet = request.wallet or str(tx.message.account_keys[0])
    signature = str(tx.signatures[0])
    lifetime = Lifetime.of(tx, last_valid)
    await _settle_before_send(rpc, rpc_url, journal, cluster, wallet, request, options, hooks)
    with hooks.while_sending():
        try:
            # Written before sending and under the journal's lock: if we die mid-send the next run
            # knows this one may land, and of several runs for this wallet at once only one sends.
            others = journal.claim(
                new_entry(
                    signature,
                    cluster,
                    lifetime.last_valid_block_height,
                    request.action,
                    wallet,
                    lifetime.nonce_account,
                    lifetime.nonce_value,
                    blockhash=lifetime.blockhash,
                    rpc=rpc_key(rpc_url),
                    # Not yet "detached" with --no-wait: that waits until the send was reported
                    # (`_settled`), else a run killed before telling it would be settled unasked.
                )
            )
            if others:
                raise _earlier_pending(others[0])
            resend = True  # the same bytes again while unseen; not after the node refused them at preflight
            try:
                await rpc.send(tx)
            except AlreadyProcessed:
                result["already_processed"] = True  # this exact transaction landed before: find out how
            except YieldError as exc:
                # No answer of a send is proof it was not forwarded (a node may forward, then fail; a
                # lagging one says BlockhashNotFound for a blockhash another has): the chain is asked.
                resend = not isinstance(exc, (TransactionFailed, TransactionExpired))
                result["send_error"] = exc.message
                hooks.warn(
                    f"the send of {signature} ended in an error ({exc.message}); asking the chain whether it arrived"
                )
            if not options.wait and "send_error" not in result and not result.get("already_processed"):
                result["status"] = "sent"
                _when_shown(hooks, lambda: journal.detach(signature))
                return Sent(result, signature)
            from yieldcli.chain.transact.confirm import Rebroadcast

            # The same signed bytes, again every ~2 s while the cluster has not seen them: never a new signature.
            rebroadcast = Rebroadcast(rpc, bytes(tx)) if resend and not result.get("already_processed") else None
            if rebroadcast is not None and "send_error" in result:
                rebroadcast.sends = 0  # the first send is not known to have reached anything
            try:
                ended = await wait(rpc, signature, lifetime, options, hooks, rebroadcast=rebroadcast, cluster=cluster)
            except RpcDisagrees as exc:
                raise _may_land(TransactionPending, result, exc.message, kind=exc.kind, hint=exc.hint) from None
            except YieldError as exc:
                raise _may_land(
                    TransactionPending,
                    result,
                    f"transaction {signature} was sent and may still land; waiting for it failed: {exc.message}",
                ) from None
            finally:
                if rebroadcast is not None:
                    result["sends"] = rebroadcast.sends
                    failed = (
                        f"; {rebroadcast.failed_sends} resend(s) failed: {rebroadcast.last_error}"
                        if rebroadcast.failed_sends
                        else ""
                    )
                    hooks.log(f"sent {rebroadcast.sends} time(s){failed}")
            return outcome_of(ended, journal, result, rpc_url, hooks)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise _may_land(
                SentThenInterrupted, result, f"interrupted after sending {signature}; it may still land"
            ) from None
        except YieldError:
            raise
        except Exception as exc:
            # A bug after the send: the signature still travels with the error, to reach the user first.
            # Any exception: its class declares no such field, hence setattr (as type checkers require).
            setattr(exc, "sent_signature", signature)  # noqa: B010
            raise


async def report_if_landed(
    rpc: Any,
    rpc_url: str,
    journal: Journal,
    options: TransactOptions,
    hooks: Hooks,
    tx: VersionedTransaction,
    result: Result,
) -> Outcome | None:
    """A transaction signed earlier may have been sent and landed already: its outcome, else None.
    Landed means proven (`proof.py`): a status the transaction itself backs, then waited for up to the
    commitment asked."""
    from solders.signature import Signature

    first = tx.signatures[0] if tx.signatures else Signature.default()
    if first == Signature.default():
        return None  # not signed yet: it cannot have been sent
    signature = str(first)
    witness = Witness(rpc, signature, options.commitment)
    status = await witness.status()
    if status is None:
        return None
    result.update(signature=signature, already_processed=True)
    try:
        ended: Waited | None = await witness.landed(status) if status.reached(options.commitment) else None
        if ended is None:  # seen, not yet proven at the commitment asked: waited for, with no deadline of ours
            ended = await wait(rpc, signature, Lifetime.of(tx, None), options, hooks)
    except RpcDisagrees as exc:
        raise _may_land(TransactionPending, result, exc.message, kind=exc.kind, hint=exc.hint) from None
    return outcome_of(ended, journal, result, rpc_url, hooks)


def _may_land(
    error: type[YieldError], result: Result, message: str, *, kind: str | None = None, hint: str | None = None
) -> YieldError:
    """The outcome is unknown: the error carries the signature and the result so far; the record stays."""
    kind = kind or ("tx.interrupted" if error is SentThenInterrupted else "tx.pending.unknown")
    return with_report(
        with_signature(error(message, hint=hint, kind=kind), str(result["signature"])), result, "pending"
    )


async def _settle_before_send(
    rpc: Any,
    rpc_url: str,
    journal: Journal,
    cluster: str,
    wallet: str,
    request: UserRequest,
    options: TransactOptions,
    hooks: Hooks,
) -> None:
    """Refuse while an earlier transaction for this wallet may land; make a send after one that landed explicit."""
    settled = await settle(journal, rpc, cluster, wallet, rpc_url)
    for entry, status in settled.failed:
        hooks.warn(f"your earlier {entry.action} {entry.signature} failed on chain in slot {status.slot}")
    _settle_detached(journal, settled, hooks)
    if settled.pending:
        raise _earlier_pending(settled.pending[0], settled.block_height)
    if not settled.landed:
        return
    lines = [
        f"your earlier {entry.action} {entry.signature} landed in slot {landed.slot}"
        for entry, landed in settled.landed
    ]
    if not options.again:
        if hooks.confirm_again is None:
            error = Refused(
                "; ".join(lines) + f"; not sending another {request.action} unless asked to send again",
                kind="refused.landed_before",
            )
            error.action = request.action
            error.signature = settled.landed[0][0].signature
            raise error
        for line in lines:
            hooks.warn(line)
        if not await said_yes(hooks.confirm_again(f"Send another {request.action} anyway?")):
            raise Declined(f"not sending another {request.action}; nothing was sent")
    else:
        for line in lines:
            hooks.warn(line)
    journal.remove(*(entry.signature for entry, _ in settled.landed))


def _settle_detached(journal: Journal, settled: Settled, hooks: Hooks) -> None:
    """Earlier transactions sent without waiting that landed: expected, so settled here, not refused."""
    detached = [(entry, status) for entry, status in settled.landed if entry.detached]
    for entry, status in detached:
        hooks.warn(f"your earlier {entry.action} {entry.signature} (sent without waiting) landed in slot {status.slot}")
    if detached:
        journal.remove(*(entry.signature for entry, _ in detached))
        settled.landed = [pair for pair in settled.landed if not pair[0].detached]


def _earlier_pending(entry: InFlight, block_height: int | None = None) -> TransactionPending:
    return with_signature(
        TransactionPending(
            f"an earlier {entry.action} ({entry.signature}) may still land, {entry.deadline(block_height)}; "
            "not sending another until its fate is known",
            kind="tx.pending.earlier",
        ),
        entry.signature,
    )


async def wait(
    rpc: Any,
    signature: str,
    lifetime: Lifetime,
    options: TransactOptions,
    hooks: Hooks,
    *,
    rebroadcast: confirm.Rebroadcast | None = None,
    cluster: str | None = None,
) -> Waited:
    from yieldcli.chain.transact import confirm

    hooks.progress("waiting", None)
    return await confirm.wait_for(
        rpc,
        signature,
        lifetime,
        options.commitment,
        options.timeout,
        rebroadcast=rebroadcast,
        on_status=lambda seen: hooks.progress("waiting", seen),
        paced=cluster is not None and cluster_named(cluster) is not None,  # a public cluster's blocks keep time
    )


def _forget(journal: Journal, signature: str, hooks: Hooks) -> None:
    """Drop a settled signature; a journal that cannot be written then must not hide the outcome."""
    try:
        journal.remove(signature)
    except ConfigError as exc:
        hooks.warn(f"{exc.message}; the next send will ask about {signature} again")


def _when_shown(hooks: Hooks, step: Callable[[], None]) -> None:
    """What follows a send's outcome reaching the person: at once, or when the caller has shown it."""
    if hooks.when_shown is None:
        step()
    else:
        hooks.when_shown(step)


def _settled(journal: Journal, signature: str, hooks: Hooks) -> None:
    """A settled signature leaves the journal once its outcome has reached the person."""
    _when_shown(hooks, lambda: _forget(journal, signature, hooks))


def outcome_of(ended: Waited, journal: Journal, result: Result, rpc_url: str, hooks: Hooks) -> Outcome:
    """The wait's end with the whole record as its result; a settled signature leaves the journal."""
    from yieldcli.chain.rpc.adapter import explorer_url

    sig = ended.signature
    again = bool(result.get("already_processed"))
    if isinstance(ended, Confirmed):
        _settled(journal, sig, hooks)
        result.update(ended.result, explorer=explorer_url(sig, rpc_url))
        return replace(ended, result=result, already_processed=again)
    if isinstance(ended, Failed) or (isinstance(ended, Expired) and not again):
        _settled(journal, sig, hooks)
        result.update(ended.result)
        return replace(ended, result=result)
    # Pending, or "already processed" by the RPC's word while its status cannot be found: never "nothing was spent".
    waited = ended if isinstance(ended, Pending) else None
    seen = waited.last_status if waited is not None else None
    result.update(status="pending", seen=seen)
    if waited is None or again:
        why = "the RPC says it was already processed, but does not show its status"
    else:
        why = f"{waited.why}{_until(journal, sig)}"
    return Pending(result, sig, why, seen, waited.last_error if waited is not None else None)


def _until(journal: Journal, signature: str) -> str:
    """`; it can land until block height N`, from its journal entry: until when to check on it."""
    try:
        entry = journal.find(signature)
    except ConfigError:
        return ""  # the journal's own error is said where it is read next
    return f"; it can land {entry.deadline()}" if entry is not None else ""
