"""Review, sign, send and confirm: the one path every transaction takes, whatever command built it.

Order matters and is the safety story: decode, review and simulate first; refuse what cannot be
signed; show the review; ask (or require --yes); sign only our slots; journal the signature; send
once; wait with the blockhash as deadline; report exactly one outcome.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import typer

from yieldcli.errors import (
    Declined,
    ExitCode,
    NetworkError,
    Refused,
    TransactionExpired,
    TransactionFailed,
    TransactionPending,
    UsageError,
    YieldError,
)
from yieldcli.render.output import Output, dumps
from yieldcli.session import Session

COMMITMENTS = ("processed", "confirmed", "finalized")


@dataclass
class TxOptions:
    """What the user asked for, from the flags every transaction command shares."""

    sign: bool = False
    send: bool = False
    yes: bool = False
    wait: bool = True
    simulate: bool = True
    commitment: str = "confirmed"
    timeout: float = 60.0
    keypair: str | None = None
    rpc_url: str | None = None
    again: bool = False  # send although an earlier transaction for this wallet landed since
    ix: bool = False  # build from /ix instructions instead of taking /tx whole

    def check(self, session: Session, *, always_confirm: bool = False) -> None:
        """Refusals that need no request: run before anything is fetched."""
        if self.commitment not in COMMITMENTS:
            raise UsageError(f"invalid --commitment {self.commitment!r}", hint="use processed, confirmed or finalized")
        if self.timeout <= 0:
            raise UsageError(f"invalid --timeout {self.timeout}: expected a positive number of seconds")
        if always_confirm and (self.sign or self.send) and not self.yes:
            raise UsageError("closing an account needs --yes", hint="review it first without --sign/--send, then add --yes")
        if self.send and not self.yes and not session.env.interactive:
            raise UsageError("--send needs --yes when not on a terminal", hint="add --yes to confirm non-interactively")


@dataclass
class Obtained:
    """A transaction to review, as the command obtained it."""

    transaction: Any  # VersionedTransaction
    last_valid_block_height: int | None = None
    lookup_tables: tuple = ()


@dataclass
class Subject:
    """Who and what the transaction is for: drives the guard and the refreshed position."""

    action: str
    expected_payer: str | None
    named_signers: set[str] = field(default_factory=set)
    wallet: str | None = None
    strategy_id: str | None = None
    mint: str | None = None


Obtain = Callable[[Any], Awaitable[Obtained]]


def run(session: Session, out: Output, options: TxOptions, subject: Subject, obtain: Obtain, *, needs_rpc: bool = False) -> None:
    """Drive the flow to one outcome; raises the outcome's error for non-zero exits."""
    asyncio.run(_run(session, out, options, subject, obtain, needs_rpc))


async def _run(session: Session, out: Output, options: TxOptions, subject: Subject, obtain: Obtain, needs_rpc: bool) -> None:
    from yieldcli.chain.rpc import Rpc

    rpc_url = session.rpc_url(options.rpc_url)
    use_rpc = needs_rpc or options.simulate or options.sign or options.send
    rpc = Rpc(rpc_url, timeout=session.timeout(), commitment=options.commitment) if use_rpc else None
    try:
        await _flow(session, out, options, subject, obtain, rpc, rpc_url)
    finally:
        if rpc is not None:
            await rpc.close()


async def _flow(session, out, options, subject, obtain, rpc, rpc_url) -> None:
    from yieldcli.chain.cluster import check_same_cluster
    from yieldcli.chain.guard import check_signable
    from yieldcli.chain.review import review_transaction
    from yieldcli.chain.rpc import redact_url
    from solders.pubkey import Pubkey

    obtained = await obtain(rpc)
    tx = obtained.transaction
    if rpc is not None and not obtained.lookup_tables:
        obtained.lookup_tables = await _lookup_tables(rpc, tx)
    review = review_transaction(tx, lookup_tables=obtained.lookup_tables or None)
    result: dict[str, Any] = {"action": subject.action, "cluster": redact_url(rpc_url), "review": review.to_dict()}

    keypair = None
    if options.sign or options.send:
        keypair = _load_keypair(session, options)
        payer = subject.expected_payer or str(keypair.pubkey())
        mine = {Pubkey.from_string(k) for k in subject.named_signers | {str(keypair.pubkey())}}
        # Refuse before showing a prompt: a foreign payer or an unnamed signer is never signed.
        check_signable(tx, Pubkey.from_string(payer), mine)
        if options.send:
            others = [s.address for s in review.signers if not s.signed and s.address != str(keypair.pubkey())]
            if others:
                raise UsageError(
                    "cannot send: the transaction also needs signatures from " + ", ".join(others),
                    hint="use --sign, have the other signers run `yield tx sign`, then `yield tx send`",
                )

    if options.send:  # before the simulation: on another cluster it would fail for that reason alone
        await check_same_cluster(rpc, tx, _expected_cluster(session, subject))
    result["simulation"] = await _simulate(rpc, tx, review, subject, options) if options.simulate and rpc else None
    _show_review(out, result, subject, prompting=(options.sign or options.send) and not options.yes and session.env.interactive)

    if not (options.sign or options.send):
        result["transaction"] = review.transaction
        result["status"] = "unsigned"
        _finish(out, result, "not signed: add --sign to sign or --send to sign and send")
        return

    sim = result["simulation"]
    # AlreadyProcessed: this exact transaction landed already; the send below finds out how, never "failed".
    if options.send and sim and not sim.get("skipped") and not sim["ok"] and sim.get("err") != "AlreadyProcessed":
        raise TransactionFailed(
            f"simulation failed, nothing was signed or sent: {sim['error']}",
            hint="run without --send to see the logs",
        )
    if rpc is not None and obtained.last_valid_block_height is None:
        obtained.last_valid_block_height = await _deadline_for(rpc, tx)

    if not options.yes and session.env.interactive:
        verb = "Sign and send" if options.send else "Sign"
        if not typer.confirm(f"{verb} this {subject.action}?", default=False, err=True):
            raise typer.Abort()

    from yieldcli.chain.sign import sign_transaction

    signed = sign_transaction(tx, [keypair])
    if not signed.signed:
        raise UsageError(f"the keypair {keypair.pubkey()} is not a signer of this transaction", hint="pass the right --keypair")
    result["transaction"] = signed.to_base64()
    result["missing_signers"] = [str(k) for k in signed.missing]
    result["signature"] = str(signed.transaction.signatures[0])
    if not options.send:
        result["status"] = "signed" if signed.complete else "partially-signed"
        note = "fully signed" if signed.complete else "still needs signatures from " + ", ".join(result["missing_signers"])
        _finish(out, result, note)
        return
    if not signed.complete:
        raise UsageError(
            "cannot send: the transaction still needs signatures from " + ", ".join(result["missing_signers"]),
            hint="use --sign, have the other signers run `yield tx sign`, then `yield tx send`",
        )
    await _send_and_wait(session, out, options, subject, rpc, rpc_url, signed.transaction, obtained.last_valid_block_height, result)


async def _lookup_tables(rpc, tx) -> tuple:
    """The tables a v0 message loads accounts from, so the review names every account.

    An unreadable table is not fatal: the review then says which accounts it could not resolve.
    """
    from yieldcli.chain.instructions import fetch_lookup_table

    tables = []
    for lookup in getattr(tx.message, "address_table_lookups", None) or ():
        try:
            tables.append(await fetch_lookup_table(rpc, lookup.account_key))
        except YieldError:
            continue
    return tuple(tables)


def _load_keypair(session: Session, options: TxOptions):
    from yieldcli.chain.keypairs import load_keypair

    setting = session.keypair_source(options.keypair)
    loaded = load_keypair(str(setting.value), stdin=session.env.stdin)
    if loaded.warning:
        session.output().warn(loaded.warning)
    return loaded.keypair


async def _deadline_for(rpc, tx) -> int:
    """The block height after which `tx` can no longer land.

    A transaction from the service carries its blockhash but not its deadline; the latest
    blockhash's deadline is never earlier, so waiting until it passes cannot call a live
    transaction expired. A blockhash that is already invalid is refused before signing.
    """
    blockhash = tx.message.recent_blockhash
    if not await rpc.is_blockhash_valid(blockhash):
        raise TransactionExpired(
            f"the transaction's blockhash {blockhash} has expired; nothing was signed or sent",
            hint="request a new transaction",
        )
    return (await rpc.latest_blockhash()).last_valid_block_height


async def _simulate(rpc, tx, review, subject: Subject, options: TxOptions) -> dict[str, Any]:
    from solders.pubkey import Pubkey

    writable = []
    for ix in review.instructions:
        for acct in ix.accounts:
            if acct.writable and acct.address and acct.address not in writable:
                writable.append(acct.address)
    try:
        sim = await rpc.simulate(tx, accounts=[Pubkey.from_string(a) for a in writable])
    except NetworkError as exc:
        if options.send:
            raise
        return {"skipped": f"the RPC could not be reached: {exc.message}"}
    from yieldcli.chain.rpc import describe_error
    from yieldcli import tokens

    changes = []
    for change in sim.token_balances:
        known = tokens.by_mint(change.mint or "")
        if subject.wallet and change.owner not in (subject.wallet, None) and change.address not in subject.named_signers:
            # The user's own accounts are what they care about; vaults and fee accounts are in the logs.
            continue
        changes.append({
            "address": change.address, "owner": change.owner, "mint": change.mint,
            "decimals": known.decimals if known else None,
            "before": change.pre, "after": change.post, "change": change.delta,
        })
    return {
        "ok": sim.ok,
        "error": None if sim.ok else describe_error(sim.err),
        "err": sim.err,
        "logs": list(sim.logs),
        "units_consumed": sim.units_consumed,
        "token_balance_changes": changes,
    }


async def _send_and_wait(session, out, options, subject, rpc, rpc_url, tx, last_valid, result) -> None:
    from yieldcli.chain.journal import new_entry
    from yieldcli.chain.rpc import AlreadyProcessed, explorer_url

    journal = _journal(session)
    cluster = await rpc.genesis_hash()
    wallet = subject.wallet or str(tx.message.account_keys[0])
    signature = str(tx.signatures[0])
    await _settle_before_send(session, out, options, subject, journal, rpc, cluster, wallet)
    with _signals_cancel():
        try:
            # Written before sending and under the journal's lock: if we die mid-send the next run
            # knows this one may land, and of several runs for this wallet at once only one sends.
            others = journal.claim(new_entry(signature, cluster, last_valid, subject.action, wallet))
            if others:
                raise _earlier_pending(others[0])
            try:
                await rpc.send(tx)
            except AlreadyProcessed:
                result["already_processed"] = True  # this exact transaction landed before: find out how
            except NetworkError as exc:
                result["status"] = "pending"
                _finish(out, result, None)
                raise TransactionPending(
                    f"the transaction {signature} may or may not have been received ({exc.message})",
                    hint=f"check it with `yield tx status {signature}` before trying again",
                ) from None
            except (TransactionFailed, TransactionExpired):
                journal.remove(signature)  # refused before broadcast: it can never land
                raise
            if not options.wait and not result.get("already_processed"):
                result["status"] = "sent"
                _finish(out, result, f"sent {signature} (not waiting: check with `yield tx status {signature}`)")
                return
            try:
                outcome = await _wait(session, rpc, signature, last_valid, options)
            except YieldError as exc:
                result["status"] = "pending"
                _finish(out, result, None)
                raise TransactionPending(
                    f"transaction {signature} was sent and may still land; waiting for it failed: {exc.message}",
                    hint=f"check it with `yield tx status {signature}`",
                ) from None
            await _report(session, out, journal, rpc_url, subject, outcome, result, explorer_url)
        except (asyncio.CancelledError, KeyboardInterrupt):
            result["status"] = "pending"
            _finish(out, result, None)
            raise SentThenInterrupted(
                f"interrupted after sending {signature}; it may still land",
                hint=f"check it with `yield tx status {signature}`",
            ) from None
        except YieldError:
            raise
        except Exception:
            # A bug after the send: the signature still reaches the user before the error does.
            session.env.stderr.write(f"transaction {signature} was sent and may still land; check it with `yield tx status {signature}`\n")
            raise


class SentThenInterrupted(YieldError):
    """Ctrl-C or SIGTERM after a transaction was sent: its signature is in the message."""

    exit_code = ExitCode.INTERRUPTED


def _journal(session):
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


async def _wait(session, rpc, signature, last_valid, options):
    from yieldcli.chain import confirm

    if not session.env.interactive:
        return await confirm.wait_for(rpc, signature, last_valid, options.commitment, options.timeout)
    from yieldcli.render.consoles import console

    with console(session.env, stderr=True, color=True).status(f"waiting for {options.commitment} …") as status:
        return await confirm.wait_for(
            rpc, signature, last_valid, options.commitment, options.timeout,
            on_status=lambda seen: status.update(f"waiting for {options.commitment} (seen: {seen or 'not yet'}) …"),
        )


async def _report(session, out, journal, rpc_url, subject, outcome, result, explorer_url) -> None:
    from yieldcli.chain import confirm

    sig = outcome.signature
    if isinstance(outcome, confirm.Confirmed):
        journal.remove(sig)
        result.update(status="confirmed", slot=outcome.slot, commitment=outcome.commitment, explorer=explorer_url(sig, rpc_url))
        if subject.action in ("deposit", "withdraw") and subject.wallet and subject.strategy_id:
            result["position"] = _refreshed_position(session, subject)
        earlier = " (it had already landed: the RPC reported it as already processed)" if result.get("already_processed") else ""
        _finish(out, result, f"confirmed {sig} in slot {outcome.slot}{earlier}\n{result['explorer']}")
        if out.mode == "table" and result.get("position") is not None:
            _draw_position(session, out, result["position"])
        return
    if isinstance(outcome, confirm.Failed):
        journal.remove(sig)
        result.update(status="failed", slot=outcome.slot, error=outcome.reason, logs=list(outcome.logs or ()))
        _finish(out, result, None)
        if out.mode == "table":
            for line in outcome.logs or ():
                session.env.stderr.write(f"    {line}\n")
        raise TransactionFailed(f"transaction {sig} failed on chain: {outcome.reason}", hint="the logs above say why")
    if isinstance(outcome, confirm.Expired) and not result.get("already_processed"):
        journal.remove(sig)
        result.update(status="expired", block_height=outcome.block_height, last_valid_block_height=outcome.last_valid_block_height)
        _finish(out, result, None)
        raise TransactionExpired(
            f"transaction {sig} expired: its blockhash passed (block height {outcome.block_height} > "
            f"{outcome.last_valid_block_height}) without it landing; nothing was spent",
            hint="run the command again for a new transaction",
        )
    # Pending, or "already processed" by the RPC's word while its status cannot be found: never "nothing was spent".
    result.update(status="pending", seen=getattr(outcome, "last_status", None))
    _finish(out, result, None)
    why = ("the RPC says it was already processed, but does not show its status" if result.get("already_processed")
           else f"still pending after the timeout (seen: {outcome.last_status or 'not yet'})")
    raise TransactionPending(f"transaction {sig}: {why}", hint=f"check later with `yield tx status {sig}`")


def _expected_cluster(session: Session, subject: Subject) -> str | None:
    """The cluster the service builds for: mainnet-beta, except the sandbox (a cluster of its own)."""
    from urllib.parse import urlsplit

    if subject.action == "transaction" or session.options.sandbox:
        return None  # `yield tx`: a transaction from anywhere; its blockhash still has to be known
    host = (urlsplit(str(session.settings.value("api_url") or "")).hostname or "").lower()
    if host == "localhost" or _is_loopback(host):
        return None
    return "mainnet-beta"


def _is_loopback(host: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


def _show_review(out: Output, result: dict[str, Any], subject: Subject, *, prompting: bool = False) -> None:
    """The review for people: on stdout in table mode; on stderr in other modes when a prompt follows."""
    if out.mode != "table" and not prompting:
        return
    from yieldcli.render.consoles import console
    from yieldcli.render.review import draw_review, draw_simulation

    con = console(out.env, stderr=out.mode != "table", color=out.color)
    draw_review(con, result["review"], cluster=result["cluster"], title=f"Review: {subject.action}")
    draw_simulation(con, result["simulation"])


def _finish(out: Output, result: dict[str, Any], note: str | None) -> None:
    """The command's data: the whole result as JSON, or the transaction and a note for people."""
    if out.mode != "table":
        out.env.stdout.write(dumps(_public(result)) + "\n")
        out.env.stdout.flush()
        return
    if result.get("status") in ("unsigned", "signed", "partially-signed") and result.get("transaction"):
        out.env.stdout.write(f"transaction (base64): {result['transaction']}\n")
    if note:
        out.env.stdout.write(note + "\n")
    out.env.stdout.flush()


def _public(result: dict[str, Any]) -> dict[str, Any]:
    simulation = result.get("simulation")
    if simulation and "err" in simulation:
        simulation = {k: v for k, v in simulation.items() if k != "err"} | {"err": _jsonable(simulation["err"])}
    return {**result, "simulation": simulation}


def _jsonable(value: Any) -> Any:
    try:
        dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)
