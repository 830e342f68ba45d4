"""Send a signed transaction once, wait for it, and report one outcome; its signature is never lost.

Before the send: settle the journal's earlier entries for this wallet and cluster, then claim the
journal under its lock. After the send, any interruption (Ctrl-C, SIGTERM) or error still ends
with the signature and how to check it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import typer

from yieldcli.commands.txflow import Subject, _expected_cluster, _finish
from yieldcli.errors import (
    Declined,
    ExitCode,
    NetworkError,
    Refused,
    TransactionExpired,
    TransactionFailed,
    TransactionPending,
    YieldError,
)
from yieldcli.render.output import Output
from yieldcli.session import Session


async def send_and_wait(session, out, options, subject, rpc, rpc_url, tx, last_valid, result) -> None:
    from yieldcli.chain.journal import new_entry
    from yieldcli.chain.rpc import AlreadyProcessed, explorer_url

    from yieldcli.chain.cluster import check_same_cluster

    # The cluster again, cheaply (its genesis hash is cached): an RPC unreachable before the simulation
    # was not checked. Not the blockhash: after a long prompt it may have expired, which the send reports.
    cluster = await check_same_cluster(rpc, tx, _expected_cluster(session, subject), blockhash=False)
    journal = journal_of(session)
    wallet = subject.wallet or str(tx.message.account_keys[0])
    signature = str(tx.signatures[0])
    from yieldcli.chain.nonce import nonce_lifetime

    nonce = nonce_lifetime(tx.message)
    await _settle_before_send(session, out, options, subject, journal, rpc, cluster, wallet)
    with _signals_cancel():
        try:
            # Written before sending and under the journal's lock: if we die mid-send the next run
            # knows this one may land, and of several runs for this wallet at once only one sends.
            others = journal.claim(new_entry(
                signature, cluster, None if nonce else last_valid, subject.action, wallet,
                *((str(nonce.account), str(nonce.value)) if nonce else ()),
            ))
            if others:
                raise _earlier_pending(others[0])
            try:
                await rpc.send(tx)
            except AlreadyProcessed:
                result["already_processed"] = True  # this exact transaction landed before: find out how
            except NetworkError as exc:
                raise _may_land(out, result, TransactionPending, f"the transaction {signature} may or may not have been received ({exc.message})") from None
            except (TransactionFailed, TransactionExpired):
                journal.remove(signature)  # refused before broadcast: it can never land
                raise
            except YieldError as exc:  # any other answer leaves it unknown whether the node took it
                raise _may_land(out, result, TransactionPending, f"the send of {signature} ended in an error ({exc.message}); it may or may not have been received") from None
            if not options.wait and not result.get("already_processed"):
                result["status"] = "sent"
                _finish(out, result, f"sent {signature} (not waiting: check with `yield tx status {signature}`)")
                return
            from yieldcli.chain.confirm import Rebroadcast

            # The same signed bytes, again every ~2 s while the cluster has not seen them: never a new signature.
            rebroadcast = None if result.get("already_processed") else Rebroadcast(rpc, bytes(tx))
            try:
                outcome = await _wait(session, rpc, signature, last_valid, options, rebroadcast=rebroadcast, nonce=nonce)
            except YieldError as exc:
                raise _may_land(out, result, TransactionPending, f"transaction {signature} was sent and may still land; waiting for it failed: {exc.message}") from None
            finally:
                if rebroadcast is not None:
                    result["sends"] = rebroadcast.sends
                    failed = f"; {rebroadcast.failed_sends} resend(s) failed: {rebroadcast.last_error}" if rebroadcast.failed_sends else ""
                    session.log(f"sent {rebroadcast.sends} time(s){failed}")
            await _report(session, out, journal, rpc_url, subject, outcome, result, explorer_url)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise _may_land(out, result, SentThenInterrupted, f"interrupted after sending {signature}; it may still land") from None
        except YieldError:
            raise
        except Exception:
            # A bug after the send: the signature still reaches the user before the error does.
            session.env.stderr.write(f"transaction {signature} was sent and may still land; check it with `yield tx status {signature}`\n")
            raise


async def report_if_landed(session, out, options, subject, rpc, rpc_url, tx, result) -> bool:
    """A transaction signed earlier may have been sent and landed already: report its outcome instead (True)."""
    from solders.signature import Signature

    from yieldcli.chain import confirm
    from yieldcli.chain.rpc import explorer_url

    first = tx.signatures[0] if tx.signatures else Signature.default()
    if first == Signature.default():
        return False  # not signed yet: it cannot have been sent
    statuses = await rpc.signature_statuses([first])
    status = statuses[0] if statuses else None
    if status is None:
        return False
    signature = str(first)
    result.update(signature=signature, already_processed=True)
    if status.err is not None:
        outcome = confirm.Failed(signature, status.slot, status.err, None)
    elif status.reached(options.commitment):
        outcome = confirm.Confirmed(signature, status.slot, status.confirmation_status or "finalized")
    else:  # landed, not yet at the commitment asked for: a landed transaction cannot expire
        outcome = await _wait(session, rpc, signature, (await rpc.latest_blockhash()).last_valid_block_height, options)
    await _report(session, out, journal_of(session), rpc_url, subject, outcome, result, explorer_url)
    return True


def _may_land(out, result, error, message: str) -> YieldError:
    """The outcome is unknown: the result (with the signature) is written, and the error says how to check."""
    result["status"] = "pending"
    _finish(out, result, None)
    return error(message, hint=f"check it with `yield tx status {result['signature']}`")


class SentThenInterrupted(YieldError):
    """Ctrl-C or SIGTERM after a transaction was sent: its signature is in the message."""

    exit_code = ExitCode.INTERRUPTED


def journal_of(session):
    from yieldcli.chain.journal import Journal
    from yieldcli.config import data_dir

    return Journal(data_dir(session.env) / "in-flight.json")


class _signals_cancel:
    """SIGTERM ends the wait as Ctrl-C does (asyncio.run turns SIGINT into a cancellation already)."""

    def __enter__(self):
        import signal

        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        try:
            self._loop.add_signal_handler(signal.SIGTERM, task.cancel)
            self._installed = True
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            self._installed = False
        return self

    def __exit__(self, *exc_info):
        import signal

        if self._installed:
            self._loop.remove_signal_handler(signal.SIGTERM)
        return False


async def _settle_before_send(session, out, options, subject, journal, rpc, cluster, wallet) -> None:
    """Refuse while an earlier transaction for this wallet may land; make a send after one that landed explicit."""
    from yieldcli.chain.settle import settle

    settled = await settle(journal, rpc, cluster, wallet)
    for entry, status in settled.failed:
        out.warn(f"your earlier {entry.action} {entry.signature} failed on chain in slot {status.slot}")
    if settled.pending:
        raise _earlier_pending(settled.pending[0])
    if not settled.landed:
        return
    lines = [f"your earlier {entry.action} {entry.signature} landed in slot {status.slot}" for entry, status in settled.landed]
    if not options.again:
        if not session.env.interactive:
            raise Refused(
                "; ".join(lines) + f"; not sending another {subject.action} without --again",
                hint=f"check your position first; add --again to send another {subject.action}",
            )
        for line in lines:
            out.warn(line)
        if not typer.confirm(f"Send another {subject.action} anyway?", default=False, err=True):
            raise Declined(f"not sending another {subject.action}; nothing was sent")
    else:
        for line in lines:
            out.warn(line)
    journal.remove(*(entry.signature for entry, _ in settled.landed))


def _earlier_pending(entry) -> TransactionPending:
    return TransactionPending(
        f"an earlier {entry.action} ({entry.signature}) may still land; not sending another until its fate is known",
        hint=f"check it with `yield tx status {entry.signature}`",
    )


async def _wait(session, rpc, signature, last_valid, options, *, rebroadcast=None, nonce=None):
    from yieldcli.chain import confirm

    if nonce is not None:
        last_valid = None  # a durable nonce, not a block height, ends its life
    lifetime = {"rebroadcast": rebroadcast, "nonce": nonce}
    if not session.env.interactive:
        return await confirm.wait_for(rpc, signature, last_valid, options.commitment, options.timeout, **lifetime)
    from yieldcli.render.consoles import console

    with console(session.env, stderr=True, color=True).status(f"waiting for {options.commitment} …") as status:
        return await confirm.wait_for(
            rpc, signature, last_valid, options.commitment, options.timeout, **lifetime,
            on_status=lambda seen: status.update(f"waiting for {options.commitment} (seen: {seen or 'not yet'}) …"),
        )


def _forget(out, journal, signature: str) -> None:
    """Drop a settled signature; a journal that cannot be written then must not hide the outcome."""
    from yieldcli.errors import ConfigError

    try:
        journal.remove(signature)
    except ConfigError as exc:
        out.warn(f"{exc.message}; the next send will ask about {signature} again")


async def _report(session, out, journal, rpc_url, subject, outcome, result, explorer_url) -> None:
    from yieldcli.chain import confirm

    sig = outcome.signature
    if isinstance(outcome, confirm.Confirmed):
        _forget(out, journal, sig)
        result.update(status="confirmed", slot=outcome.slot, commitment=outcome.commitment, explorer=explorer_url(sig, rpc_url))
        if subject.action in ("deposit", "withdraw") and subject.wallet and subject.strategy_id:
            result["position"] = _refreshed_position(session, subject)
        earlier = " (it had landed already: nothing new was sent)" if result.get("already_processed") else ""
        _finish(out, result, f"{out.paint('confirmed', 'green', stderr=False)} {sig} in slot {outcome.slot}{earlier}\n{result['explorer']}")
        if out.mode == "table" and result.get("position") is not None:
            _draw_position(session, out, result["position"])
        return
    if isinstance(outcome, confirm.Failed):
        _forget(out, journal, sig)
        result.update(status="failed", slot=outcome.slot, error=outcome.reason, logs=list(outcome.logs or ()))
        _finish(out, result, None)
        if out.mode == "table":
            for line in outcome.logs or ():
                session.env.stderr.write(f"    {line}\n")
        raise TransactionFailed(f"transaction {sig} failed on chain: {outcome.reason}", hint="the logs above say why")
    if isinstance(outcome, confirm.Expired) and not result.get("already_processed"):
        _forget(out, journal, sig)
        result.update(status="expired", block_height=outcome.block_height, last_valid_block_height=outcome.last_valid_block_height,
                      nonce_account=outcome.nonce_account)
        _finish(out, result, None)
        raise TransactionExpired(f"transaction {sig} expired: {_why_expired(outcome)} without it landing; nothing was spent",
                                 hint="run the command again for a new transaction")
    # Pending, or "already processed" by the RPC's word while its status cannot be found: never "nothing was spent".
    result.update(status="pending", seen=getattr(outcome, "last_status", None))
    _finish(out, result, None)
    why = ("the RPC says it was already processed, but does not show its status" if result.get("already_processed")
           else f"still pending after the timeout (seen: {outcome.last_status or 'not yet'})")
    raise TransactionPending(f"transaction {sig}: {why}", hint=f"check later with `yield tx status {sig}`")


def _why_expired(outcome) -> str:
    if outcome.nonce_account is not None or outcome.last_valid_block_height is None:
        return f"its durable nonce (account {outcome.nonce_account or 'unknown'}) moved on"
    return f"its blockhash passed (block height {outcome.block_height} > {outcome.last_valid_block_height})"


def _refreshed_position(session: Session, subject: Subject) -> dict[str, Any] | None:
    try:
        body = session.api().positions(subject.wallet, subject.strategy_id, asset=subject.mint)
    except YieldError as exc:
        session.output().warn(f"the transaction is confirmed, but the refreshed position could not be read: {exc.message}")
        return None
    items = body.get("data") if isinstance(body, dict) else None
    return items[0] if items else None


def _draw_position(session: Session, out: Output, position: dict[str, Any]) -> None:
    from yieldcli.api import models
    from yieldcli.api.pagination import PageResult

    out.page(PageResult("positions", [(position, models.position(position, 0))], dict))
