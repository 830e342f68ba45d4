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
    ix: bool = False  # build from /ix instructions instead of taking /tx whole
    unsafe_allow_mismatch: bool = False
    max_sol_cost: int | None = None  # lamports of fee and rent allowed; None: the guard's default

    def check(self, session: Session, *, always_confirm: bool = False) -> None:
        """Refusals that need no request: run before anything is fetched."""
        if self.unsafe_allow_mismatch and not session.env.interactive:
            raise Refused(
                "--unsafe-allow-mismatch is refused off a terminal: a person must read the differences first",
                hint="run it on a terminal, or fix the request so the transaction matches it",
            )
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
    amount: int | None = None  # base units; None with a mint means --all
    exclude_fees: bool = False
    unwrap: bool = False


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

    from yieldcli.commands import txcheck

    intent = txcheck.intent_of(subject, options, review, keypair)
    check = None
    if options.simulate and rpc:
        result["simulation"], check = await txcheck.simulate(rpc, tx, obtained.lookup_tables, intent, subject, options)
    else:
        result["simulation"] = None
    result["effect"] = check.to_dict() if check is not None else None
    _show_review(out, result, subject)

    if not (options.sign or options.send):
        result["transaction"] = review.transaction
        result["status"] = "unsigned"
        _finish(out, result, "not signed: add --sign to sign or --send to sign and send")
        return

    txcheck.guard(session, out, options, result, check)
    if rpc is not None and obtained.last_valid_block_height is None:
        obtained.last_valid_block_height = await _deadline_for(rpc, tx)

    if session.env.interactive and (not options.yes or (check is not None and not check.ok)):
        verb = "Sign and send" if options.send else "Sign"
        if check is not None:
            session.env.stderr.write(check.summary + "\n")
        if not typer.confirm(f"{verb} this {subject.action}?", default=False, err=True):
            raise Declined("declined; nothing was signed")

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


async def _send_and_wait(session, out, options, subject, rpc, rpc_url, tx, last_valid, result) -> None:
    from yieldcli.chain.journal import Journal
    from yieldcli.chain.rpc import explorer_url
    from yieldcli.config import data_dir

    journal = Journal(data_dir(session.env) / "in-flight.json")
    await settle_in_flight(journal, rpc, rpc_url)
    signature = str(tx.signatures[0])
    # Written before sending: if we die mid-send, the next run still knows this one may land.
    journal.add(signature, rpc_url, last_valid, subject.action, subject.wallet or "")
    try:
        await rpc.send(tx)
    except NetworkError as exc:
        result["status"] = "pending"
        _finish(out, result, None)
        raise TransactionPending(
            f"the transaction {signature} may or may not have been received ({exc.message})",
            hint=f"check it with `yield tx status {signature}` before trying again",
        ) from None
    except TransactionFailed:
        journal.remove(signature)  # refused in preflight: it was never broadcast
        raise
    if not options.wait:
        result["status"] = "sent"
        _finish(out, result, f"sent {signature} (not waiting: check with `yield tx status {signature}`)")
        return

    outcome = await _wait(session, rpc, signature, last_valid, options)
    await _report(session, out, journal, rpc_url, subject, outcome, result, explorer_url)


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
        _finish(out, result, f"confirmed {sig} in slot {outcome.slot}\n{result['explorer']}")
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
    if isinstance(outcome, confirm.Expired):
        journal.remove(sig)
        result.update(status="expired", block_height=outcome.block_height, last_valid_block_height=outcome.last_valid_block_height)
        _finish(out, result, None)
        raise TransactionExpired(
            f"transaction {sig} expired: its blockhash passed (block height {outcome.block_height} > "
            f"{outcome.last_valid_block_height}) without it landing; nothing was spent",
            hint="run the command again for a new transaction",
        )
    result.update(status="pending", seen=outcome.last_status)
    _finish(out, result, None)
    raise TransactionPending(
        f"transaction {sig} is still pending after the timeout (seen: {outcome.last_status or 'not yet'})",
        hint=f"check later with `yield tx status {sig}`",
    )


async def settle_in_flight(journal, rpc, rpc_url: str) -> None:
    """Refuse to send while an earlier transaction to this cluster could still land."""
    for entry in journal.entries(rpc_url):
        statuses = await rpc.signature_statuses([entry.signature])
        if statuses and statuses[0] is not None:
            journal.remove(entry.signature)  # landed (or failed): its fate is known
            continue
        if await rpc.block_height() > entry.last_valid_block_height:
            journal.remove(entry.signature)  # expired: it can never land
            continue
        raise TransactionPending(
            f"an earlier {entry.action} ({entry.signature}) may still land; not sending another until its fate is known",
            hint=f"check it with `yield tx status {entry.signature}`",
        )


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


def _show_review(out: Output, result: dict[str, Any], subject: Subject) -> None:
    if out.mode != "table":
        return
    from yieldcli.render.consoles import console
    from yieldcli.render.review import draw_effect, draw_review, draw_simulation

    con = console(out.env, stderr=False, color=out.color)
    draw_effect(con, result.get("effect"))
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
