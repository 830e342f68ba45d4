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
    UsageError,
    YieldError,
)
from yieldcli.render.output import Output, dumps
from yieldcli.session import Session

from yieldcli.solana.cluster import COMMITMENTS


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
    unsafe_allow_mismatch: bool = False
    max_sol_cost: int | None = None  # lamports of fee and rent allowed; None: the guard's default
    priority_fee: int | str | None = None  # "auto" or micro-lamports per compute unit (text until `check`)
    priority_fee_source: str = "flag"  # flag, env or config: only a flag insists on a transaction already signed
    max_fee: int | None = None  # lamports of base plus priority fee allowed
    nonce: str | None = None  # durable-nonce account to build on (with --ix)
    nonce_authority: str | None = None  # keypair file or public key of the nonce's authority
    extra_signers: list = field(default_factory=list)  # keypairs signing besides --keypair (a nonce authority)

    def check(self, session: Session, *, always_confirm: bool = False) -> None:
        """Refusals that need no request: run before anything is fetched."""
        self._resolve_fees(session)
        if self.nonce is not None and not self.ix:
            raise UsageError("--nonce needs --ix", hint="a durable nonce is built into the transaction yield compiles from /ix instructions")
        if self.nonce_authority is not None and self.nonce is None:
            raise UsageError("--nonce-authority needs --nonce")
        if self.nonce is not None:
            from yieldcli.addresses import check_pubkey

            self.nonce = check_pubkey(self.nonce, "--nonce")
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

    def _resolve_fees(self, session: Session) -> None:
        """--priority-fee and --max-fee, else YIELD_PRIORITY_FEE / YIELD_MAX_FEE, else the profile."""
        from yieldcli.chain.compute_budget import MAX_U64, parse_priority_fee
        from yieldcli.numbers import parse_whole

        if isinstance(self.priority_fee, str):
            self.priority_fee = parse_priority_fee(self.priority_fee)
        elif self.priority_fee is None:
            found = session.settings.get("priority_fee")
            if found.value is not None:
                self.priority_fee = session.settings.checked("priority_fee", lambda value, name: parse_priority_fee(str(value)))
                self.priority_fee_source = found.source
        if self.max_fee is None and session.settings.get("max_fee").value is not None:
            self.max_fee = session.settings.checked(
                "max_fee", lambda value, name: parse_whole(str(value), name=name, minimum=0, maximum=MAX_U64))


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
    use_rpc = needs_rpc or options.simulate or options.sign or options.send or options.priority_fee is not None
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

    from yieldcli.commands import txcheck

    obtained = await obtain(rpc)
    if rpc is not None and not obtained.lookup_tables:
        obtained.lookup_tables = await _lookup_tables(rpc, obtained.transaction)
    # The fee is set before anything else looks at the transaction: the review, the intent check and
    # the signature all see the final one.
    fees = await txcheck.budget(session, rpc, options, obtained)
    tx = obtained.transaction
    review = review_transaction(tx, lookup_tables=obtained.lookup_tables or None)
    result: dict[str, Any] = {"action": subject.action, "cluster": redact_url(rpc_url), "review": review.to_dict(),
                              "fee": txcheck.fee_dict(fees)}

    keypair = None
    if options.sign or options.send:
        keypair = _load_keypair(session, options)
        payer = subject.expected_payer or str(keypair.pubkey())
        signers = [keypair, *options.extra_signers]
        mine = {Pubkey.from_string(k) for k in subject.named_signers} | {k.pubkey() for k in signers}
        # Refuse before showing a prompt: a foreign payer or an unnamed signer is never signed.
        check_signable(tx, Pubkey.from_string(payer), mine)
        if options.send:
            others = [s.address for s in review.signers if not s.signed and s.address not in {str(k.pubkey()) for k in signers}]
            if others:
                raise UsageError(
                    "cannot send: the transaction also needs signatures from " + ", ".join(others),
                    hint="use --sign, have the other signers run `yield tx sign`, then `yield tx send`",
                )

    if options.send and await _settled_before_simulation(session, out, options, subject, rpc, rpc_url, tx, result):
        return  # this exact transaction landed already: its outcome is reported, nothing is sent

    if rpc is not None and keypair is not None and obtained.last_valid_block_height is None:
        # Before the simulation: a nonce that moved on (or a blockhash that passed) is why it would fail.
        try:
            obtained.last_valid_block_height = await _deadline_for(rpc, tx)
        except NetworkError:
            pass  # unreachable: the simulation step says so; the deadline is asked again before signing

    intent = txcheck.intent_of(subject, options, review, keypair)
    check = None
    if options.simulate and rpc:
        result["simulation"], check = await txcheck.simulate(rpc, tx, obtained.lookup_tables, intent, subject, options)
    else:
        result["simulation"] = None
    result["effect"] = check.to_dict() if check is not None else None
    prompting = (options.sign or options.send) and session.env.interactive and (
        not options.yes or (check is not None and not check.ok)
    )
    _show_review(out, result, subject, prompting=prompting)

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

    signed = sign_transaction(tx, signers)
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


async def _deadline_for(rpc, tx) -> int | None:
    """The block height after which `tx` can no longer land; None for a durable-nonce transaction.

    A transaction from the service carries its blockhash but not its deadline; the latest
    blockhash's deadline is never earlier, so waiting until it passes cannot call a live
    transaction expired. A blockhash that is already invalid is refused before signing; so is a
    nonce that has moved on (a nonce transaction has no block-height deadline: it lives as long
    as its nonce).
    """
    from yieldcli.chain.nonce import nonce_lifetime, nonce_moved_on

    lifetime = nonce_lifetime(tx.message)
    if lifetime is not None:
        if await nonce_moved_on(rpc, lifetime):
            raise TransactionExpired(
                f"the transaction's durable nonce {lifetime.value} is no longer the value of nonce account "
                f"{lifetime.account}: it was used or advanced; nothing was signed or sent",
                hint="build the transaction again on the nonce's current value",
            )
        return None
    blockhash = tx.message.recent_blockhash
    if not await rpc.is_blockhash_valid(blockhash):
        raise TransactionExpired(
            f"the transaction's blockhash {blockhash} has expired; nothing was signed or sent",
            hint="request a new transaction",
        )
    return (await rpc.latest_blockhash()).last_valid_block_height


async def _send_and_wait(session, out, options, subject, rpc, rpc_url, tx, last_valid, result) -> None:
    from yieldcli.commands.sending import send_and_wait

    await send_and_wait(session, out, options, subject, rpc, rpc_url, tx, last_valid, result)


async def _settled_before_simulation(session, out, options, subject, rpc, rpc_url, tx, result) -> bool:
    """Refuse an RPC on another cluster; report a transaction that already landed (True: nothing more to do)."""
    from yieldcli.chain.cluster import check_same_cluster
    from yieldcli.chain.nonce import nonce_lifetime
    from yieldcli.commands.sending import report_if_landed

    # Before the simulation: on another cluster, or once landed, it would fail for that reason alone.
    # A durable nonce is no recent blockhash: `_deadline_for` checks it against its nonce account.
    try:
        await check_same_cluster(rpc, tx, _expected_cluster(session, subject), blockhash=nonce_lifetime(tx.message) is None)
        return await report_if_landed(session, out, options, subject, rpc, rpc_url, tx, result)
    except NetworkError:
        return False  # unreachable: the simulation step says so, and the check runs again before any send


def _expected_cluster(session: Session, subject: Subject) -> str | None:
    """The cluster the service builds for: mainnet-beta, except the sandbox (a cluster of its own)."""
    from urllib.parse import urlsplit

    if subject.action == "transaction" or session.options.sandbox:
        return None  # `yield tx`: a transaction from anywhere; its blockhash still has to be known
    from yieldcli.urls import is_loopback

    if is_loopback(urlsplit(str(session.settings.value("api_url") or "")).hostname):
        return None
    return "mainnet-beta"


def _show_review(out: Output, result: dict[str, Any], subject: Subject, *, prompting: bool = False) -> None:
    """The review for people: on stdout in table mode; on stderr in other modes when a prompt follows."""
    if out.mode != "table" and not prompting:
        return
    from yieldcli.render.consoles import console
    from yieldcli.render.review import draw_effect, draw_review, draw_simulation

    con = console(out.env, stderr=out.mode != "table", color=out.color)
    draw_effect(con, result.get("effect"), result.get("fee"))
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
