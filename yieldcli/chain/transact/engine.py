"""Review, sign, send and confirm: the one path every transaction takes, whoever built it and whoever asks.

Order matters and is the safety story: obtain, set the fee, decode, review and simulate first; check
the effect against what was asked; refuse what cannot be signed; ask `confirm` (no callback: nothing
is signed); sign only our slots; journal the signature; send once (rebroadcasting the same bytes);
wait with the blockhash or nonce as deadline; end in exactly one outcome.

Two steps, so a caller can look at the review before anything is signed:

    prepared = await prepare(rpc, rpc_url, request, obtain, options, hooks, load_signers, journal)
    outcome = await complete(rpc, prepared, hooks, journal)   # Unsigned, Signed, Sent, Confirmed, Failed, ...

or both at once with `run` (`hooks.on_review` sees the review before any refusal or question).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from solders.pubkey import Pubkey

from yieldcli.chain.rpc.cluster_identity import check_same_cluster
from yieldcli.chain.transact import checks
from yieldcli.chain.transact.ask_ahead import ask_ahead_check_reads, ask_ahead_for
from yieldcli.chain.transact.checks import message_of
from yieldcli.chain.transact.consent import said_yes
from yieldcli.chain.transact.lifetime import check_after_yes, lifetime_text
from yieldcli.chain.transact.outcomes import ConfirmationRequired, Outcome, Result, Signed, Unsigned, with_report
from yieldcli.chain.transact.types import (
    Hooks,
    Obtain,
    Prepared,
    TransactionToReview,
    TransactOptions,
    UserRequest,
)
from yieldcli.errors import Declined, NetworkError, Refused, UsageError
from yieldcli.urls import redact_url

if TYPE_CHECKING:
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.journal import Journal

# The vocabulary lives in types.py; callers name it from here, where the steps are.
__all__ = [
    "Hooks",
    "Obtain",
    "Prepared",
    "TransactOptions",
    "TransactionToReview",
    "UserRequest",
    "complete",
    "prepare",
    "run",
]


async def prepare(
    rpc: Any,
    rpc_url: str,
    request: UserRequest,
    obtain: Obtain,
    options: TransactOptions,
    hooks: Hooks,
    load_signers: Callable[[], Sequence[Signer]] | None = None,
    journal: Journal | None = None,
) -> Prepared | Outcome:
    """Obtain, budget, review, check signability and simulate. An Outcome instead when this exact
    (already signed) transaction turns out to have landed: nothing more to do."""
    from yieldcli.chain.guard.signers import check_signable
    from yieldcli.chain.tx.review import review_transaction

    options.validate()
    to_review = await obtain(rpc)
    ask_ahead_for(rpc, to_review, options)  # the cluster and deadline questions ride on the next exchange
    unreachable: NetworkError | None = None
    if rpc is not None and not to_review.lookup_tables:
        try:
            to_review.lookup_tables = await checks.lookup_tables(rpc, to_review.transaction)
        except NetworkError as exc:  # the review names what it can; the check cannot run
            unreachable = exc
    ask_ahead_check_reads(rpc, to_review, options)  # rides with the priority fee's question, when there is one
    # The fee is set before anything else looks at the transaction: the review, the intent check and
    # the signature all see the final one.
    fees = await checks.budget(rpc, options, to_review, hooks.log)
    tx = to_review.transaction
    review = review_transaction(tx, lookup_tables=to_review.lookup_tables or None)
    result: Result = {
        "action": request.action,
        "cluster": redact_url(rpc_url),
        "review": review.to_dict(),
        "fee": checks.fee_dict(fees),
    }
    if to_review.service_answer is not None:
        result["service_answer"] = to_review.service_answer
    if review.signers and not review.unsigned_signers:
        result["nothing_to_sign"] = True  # every signature is there: sent as it is, no intent needed

    signers: list[Signer] = []
    if options.sign or options.send:
        if load_signers is None:
            raise UsageError("signing needs a keypair", kind="usage.no_keypair")
        signers = list(load_signers())
        payer = request.expected_payer or str(signers[0].pubkey())
        mine = {Pubkey.from_string(k) for k in request.named_signers} | {k.pubkey() for k in signers}
        # Refused before any prompt: a foreign payer or an unnamed signer is never signed.
        check_signable(tx, Pubkey.from_string(payer), mine)
        if options.send:
            ours = {str(k.pubkey()) for k in signers}
            others = [s.address for s in review.signers if not s.signed and s.address not in ours]
            if others:
                raise UsageError(
                    "cannot send: the transaction also needs signatures from " + ", ".join(others),
                    kind="usage.missing_signers",
                )

    if journal is not None and (options.send or (rpc is not None and (options.landed_first or not options.sign))):
        # Sent, or inspected: a transaction that landed already ends in its outcome (with its slot),
        # not in a simulation that fails because it was processed.
        landed = await _landed_already(rpc, rpc_url, journal, options, hooks, tx, result, same_cluster=options.send)
        if landed is not None:
            return landed

    last_valid = to_review.last_valid_block_height
    if rpc is not None and signers and last_valid is None:
        # Before the simulation: a nonce that moved on (or a blockhash that passed) is why it would fail.
        try:
            last_valid = await checks.deadline_for(rpc, tx)
        except NetworkError:
            pass  # unreachable: the simulation step says so; the deadline is asked again before signing

    intent = checks.intent_of(request, options, review, signers, to_review.nonce)
    check = None
    if options.simulate and rpc and unreachable is not None:
        result["simulation"] = checks.unreachable(unreachable)
    elif options.simulate and rpc:
        result["simulation"], check = await checks.simulate(rpc, tx, to_review.lookup_tables, intent, request)
    else:
        result["simulation"] = None
    result["effect"] = check.to_dict() if check is not None else None
    if any(hasattr(signer, "message_hash") for signer in signers):
        from yieldcli.chain.keys.ledger.signer import message_hash
        from yieldcli.chain.tx.signatures import message_bytes

        # What a Ledger shows when it blind-signs: the person compares it with the review's.
        result["message_hash"] = message_hash(message_bytes(tx))
    return Prepared(
        request, options, rpc_url, tx, review, fees, check, result, signers, last_valid, to_review.lookup_tables
    )


async def _landed_already(
    rpc: Any,
    rpc_url: str,
    journal: Journal,
    options: TransactOptions,
    hooks: Hooks,
    tx: VersionedTransaction,
    result: Result,
    *,
    same_cluster: bool = True,
) -> Outcome | None:
    """Refuse an RPC on another cluster (`same_cluster`: before a send); the outcome of a transaction
    that already landed."""
    from yieldcli.chain.transact.broadcast import report_if_landed
    from yieldcli.chain.tx.nonce import nonce_lifetime

    # Before the simulation: on another cluster, or once landed, it would fail for that reason alone.
    # A durable nonce is no recent blockhash: `deadline_for` checks it against its nonce account.
    try:
        if same_cluster:
            await check_same_cluster(rpc, tx, options.expected_cluster, blockhash=False)
        landed = await report_if_landed(rpc, rpc_url, journal, options, hooks, tx, result)
        if landed is None and same_cluster and nonce_lifetime(message_of(tx)) is None:
            # Its blockhash, once it is known not to have landed: a landed one's blockhash has often passed.
            await check_same_cluster(rpc, tx, options.expected_cluster)
        return landed
    except NetworkError:
        return None  # unreachable: the simulation step says so, and the check runs again before any send


async def complete(
    rpc: Any, prepared: Prepared, hooks: Hooks, journal: Journal | None = None, *, again: str = ""
) -> Outcome:
    """Guard, confirm, sign, and (when asked) send and wait. Refusals raise before any signature; a yes
    given after the transaction's blockhash passed (or its nonce moved on) raises `ReviewExpired`.
    `again`: what the question says first when it is asked of a transaction built again."""
    from yieldcli.chain.keys.sign import before_sign, sign_transaction
    from yieldcli.chain.tx.signatures import message_bytes

    options, result, tx = prepared.options, prepared.result, prepared.transaction
    hooks.on_review(prepared)
    if not prepared.asks_to_sign:
        result["transaction"] = prepared.review.transaction
        # Reviewed only: nothing signed here, the status says what the transaction carries.
        carried = [s for s in prepared.review.signers if s.signed]
        result["status"] = "signed" if prepared.nothing_to_sign else ("partially-signed" if carried else "unsigned")
        return Unsigned(result, prepared.review.transaction)

    invalid = [s.address for s in prepared.review.signers if s.invalid]
    if invalid:  # changed since it was signed, or signed for another message: never signed over nor passed on
        raise with_report(
            Refused(
                f"refusing to sign or send: the signature of {', '.join(invalid)} does not verify against this "
                "transaction (it was changed after it was signed); nothing was signed or sent",
                kind="refused.signature",
            ),
            result,
            "refused",
        )
    signing = not prepared.nothing_to_sign  # fully signed already: sent as it is, nothing signed here
    checks.refuse_before_signing(options, result, prepared.effect, hooks, signing=signing)
    last_valid = prepared.last_valid_block_height
    if rpc is not None and last_valid is None:
        last_valid = await checks.deadline_for(rpc, tx)

    verb = ("Sign and send" if options.send else "Sign") if signing else "Send"
    # A device that could not sign this message (a Ledger with blind signing off) says so before
    # the person is asked, and before anything is sent to it to sign.
    if signing:
        before_sign(prepared.signers, message_bytes(tx))
    if hooks.confirm is None:
        raise ConfirmationRequired("nothing was signed: signing needs a confirm callback that says yes")
    question, blocks_left = f"{again}{verb} this {prepared.request.noun}?", None
    if signing:  # how long it stays valid: a yes after that never signs (`check_after_yes`)
        lifetime, blocks_left = await lifetime_text(rpc, tx, last_valid)
        question += f" ({lifetime})" if lifetime else ""
    asked_at = time.monotonic()
    if not await said_yes(hooks.confirm(question, prepared)):
        raise Declined("declined; nothing was signed", kind="declined")
    if signing:
        answered_in = time.monotonic() - asked_at
        await check_after_yes(rpc, prepared, last_valid, answered_in=answered_in, blocks_left=blocks_left)

    signed = sign_transaction(tx, prepared.signers if signing else ())
    if signing and not signed.signed:
        raise UsageError(
            f"the keypair {prepared.signers[0].pubkey()} is not a signer of this transaction", kind="usage.not_a_signer"
        )
    result["transaction"] = signed.to_base64()
    result["missing_signers"] = [str(k) for k in signed.missing]
    fee_payer_signature = signed.transaction.signatures[0]
    # None until the fee payer has signed: the placeholder (all ones) is no transaction's signature.
    result["signature"] = (
        None if fee_payer_signature == type(fee_payer_signature).default() else str(fee_payer_signature)
    )
    if not options.send:
        result["status"] = "signed" if signed.complete else "partially-signed"
        return Signed(result, result["transaction"], result["signature"] or "", result["missing_signers"])
    if not signed.complete:
        raise UsageError(
            "cannot send: the transaction still needs signatures from " + ", ".join(result["missing_signers"]),
            kind="usage.missing_signers",
        )
    if journal is None:
        raise UsageError("sending needs a journal: a sent signature is never lost", kind="usage.no_journal")
    from yieldcli.chain.transact.broadcast import send_and_wait

    return await send_and_wait(
        rpc, prepared.rpc_url, journal, prepared.request, options, hooks, signed.transaction, last_valid, result
    )


async def run(
    rpc: Any,
    rpc_url: str,
    request: UserRequest,
    obtain: Obtain,
    options: TransactOptions,
    hooks: Hooks,
    load_signers: Callable[[], Sequence[Signer]] | None = None,
    journal: Journal | None = None,
) -> Outcome:
    """Prepare and complete: one outcome (the landed one, when this exact transaction landed before)."""
    prepared = await prepare(rpc, rpc_url, request, obtain, options, hooks, load_signers, journal)
    if not isinstance(prepared, Prepared):
        return prepared
    return await complete(rpc, prepared, hooks, journal)
