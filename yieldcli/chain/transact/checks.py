"""The checks before any signature: the fee budget, what the user asked, the simulation and its verdict,
and the transaction's deadline.

Everything here runs before the prompt; `refuse_before_signing` is the one place that turns a mismatch, a failed
simulation or a missing check into a refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from solders.message import Message, MessageV0

from yieldcli import tokens
from yieldcli.chain.guard.intent import DEFAULT_MAX_SOL_COST, Intent
from yieldcli.chain.guard.intent import UNASKED_PRIORITY_FEE as UNASKED
from yieldcli.chain.guard.kinds import kind_named
from yieldcli.chain.transact.outcomes import RPC_UNREACHABLE, Result, untrusted_refusal, with_report
from yieldcli.errors import NetworkError, Refused, SimulationFailed, TransactionExpired, UsageError, YieldError
from yieldcli.solana.transaction_errors import describe_error

if TYPE_CHECKING:
    from solders.address_lookup_table_account import AddressLookupTableAccount
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.fees.compute_budget import FeeSummary
    from yieldcli.chain.guard.intent import Check
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.types import Hooks, TransactionToReview, TransactOptions, UserRequest
    from yieldcli.chain.tx.review import Review

Log = Callable[[str], None]


async def budget(rpc: Any, options: TransactOptions, to_review: TransactionToReview, log: Log) -> FeeSummary | None:
    """Set the priority fee and compute-unit limit (replacing `to_review.transaction`), check the fee
    ceiling: the fees the final transaction pays, or None when they cannot be read (no ceiling to enforce)."""
    from solders.signature import Signature

    from yieldcli.chain.fees.compute_budget import budget_transaction, check_auto_ceiling, fee_summary

    tx, tables = to_review.transaction, to_review.lookup_tables
    price = options.priority_fee
    if _default_fee_stands_aside(options, any(s != Signature.default() for s in tx.signatures)):
        log(f"priority fee from {options.priority_fee_source} not applied: the transaction already carries signatures")
        price = None
    if rpc is None and price is None:
        try:
            return fee_summary(message_of(tx), tables)
        except YieldError:
            return None  # review only: accounts in unread lookup tables; the fee shows once an RPC is used
    try:
        budgeted = await budget_transaction(rpc, tx, tables, priority_fee=price, max_fee=options.max_fee)
    except YieldError as exc:
        if price is None and options.max_fee is None and not isinstance(exc, Refused):
            return None
        raise
    if price == "auto" and options.max_fee is None:
        check_auto_ceiling(budgeted.fees)
    if budgeted.units_consumed is not None:
        log(
            f"compute units: {budgeted.units_consumed} simulated, limit {budgeted.fees.unit_limit}; "
            f"price {budgeted.fees.unit_price} micro-lamports per unit ({price if price == 'auto' else 'given'})"
        )
    to_review.transaction = budgeted.transaction
    return budgeted.fees


def fee_dict(fees: FeeSummary | None) -> dict[str, int] | None:
    """The fee as the review and JSON show it: lamports, the limit and the price per unit."""
    if fees is None:
        return None
    return {
        "signatures": fees.signatures,
        "base": fees.base_fee,
        "precompile_signatures": fees.precompile_signatures,
        "precompile": fees.precompile_fee,
        "priority": fees.priority_fee,
        "total": fees.total,
        "compute_unit_limit": fees.unit_limit,
        "compute_unit_price": fees.unit_price,
    }


def intent_of(
    request: UserRequest,
    options: TransactOptions,
    review: Review,
    signers: Sequence[Signer],
    nonce: str | None = None,
) -> Intent:
    """What the user asked, for the intent check: whoever signs is the user; without an action, only paying fees.
    `nonce` is the durable-nonce account the transaction was built on at the user's request."""
    keypair = signers[0] if signers else None
    signer = str(keypair.pubkey()) if keypair is not None else None
    kind = kind_named(request.checked_as)  # checked as its row says (an unknown kind is refused)
    action = kind.name
    # A transaction with no action stated is the signer's (or its payer's); an action is its wallet's.
    wallet = (request.wallet or signer or review.fee_payer) if kind.asset else (signer or review.fee_payer)
    payer = request.expected_payer or review.fee_payer
    # Without an explicit allowance: the default rent allowance plus the fee the fee ceiling allows.
    max_sol_cost = (
        options.max_sol_cost if options.max_sol_cost is not None else DEFAULT_MAX_SOL_COST + (options.max_fee or 0)
    )
    return Intent(
        action=action,
        wallet=wallet,
        payer=payer,
        mint=request.mint,
        amount=request.amount,
        decimals=request.decimals,
        named_as=request.named_as,
        strategy=request.strategy_id,
        exclude_fees=request.exclude_fees,
        unwrap=request.unwrap,
        max_sol_cost=max_sol_cost,
        strategy_program=options.strategy_program,
        funds_recipient=request.funds_recipient,
        trust_file=options.trust_file if request.trust else None,
        signers=tuple(str(s.pubkey()) for s in signers),
        nonce=nonce or request.nonce,
        token_account=request.token_account,
        position=request.position,
        # The user's own priority fee or fee cap is checked when the fee is set (`budget`).
        max_priority_fee=None if _in_charge_of_the_fee(options, review) else UNASKED,
    )


def _default_fee_stands_aside(options: TransactOptions, carries_signatures: bool) -> bool:
    """A default priority fee (environment, profile: not asked for this transaction) cannot apply to a
    transaction that already carries signatures: recompiling it would void them."""
    return options.priority_fee is not None and not options.priority_fee_insists and carries_signatures


def _in_charge_of_the_fee(options: TransactOptions, review: Review) -> bool:
    """A fee cap, or a priority fee that was asked for this transaction or applied to it. A default
    that stood aside leaves the fee someone else set: held to what is accepted when you set none."""
    if options.max_fee is not None:
        return True
    stood_aside = _default_fee_stands_aside(options, any(signer.signed for signer in review.signers))
    return options.priority_fee is not None and not stood_aside


async def simulate(
    rpc: Any,
    tx: VersionedTransaction,
    lookup_tables: tuple[AddressLookupTableAccount, ...],
    intent: Intent,
    request: UserRequest,
) -> tuple[Result, Check | None]:
    """The simulation for the review and the intent check of the exact transaction: `(simulation, check)`."""
    from yieldcli.chain.guard.read import check_transaction

    tables = {str(t.key): [str(a) for a in t.addresses] for t in lookup_tables or ()}
    try:
        check, sim = await check_transaction(rpc, tx, intent, tables)
    except NetworkError as exc:  # a send is then refused by `refuse_before_signing`: it needs the check
        return unreachable(exc), None
    except ValueError as exc:  # a lookup table could not be read: the accounts it loads are unknown
        return {"skipped": f"the transaction's accounts could not all be named: {exc}"}, None

    changes = []
    read = check.observed.get("decimals", {}) if check else {}  # the mints as the check read them
    for change in sim.token_balances:
        known = tokens.built_in(change.mint or "")
        if (
            request.wallet
            and change.owner not in (request.wallet, None)
            and change.address not in request.named_signers
        ):
            # The user's own accounts are what they care about; vaults and fee accounts are in the logs.
            continue
        changes.append(
            {
                "address": change.address,
                "owner": change.owner,
                "mint": change.mint,
                "decimals": known.decimals if known else read.get(change.mint or ""),
                "before": change.pre,
                "after": change.post,
                "change": change.delta,
            }
        )
    simulation = {
        "ok": sim.ok,
        "error": None if sim.ok else describe_error(sim.err),
        "err": sim.err,
        "logs": list(sim.logs),
        "units_consumed": sim.units_consumed,
        "token_balance_changes": changes,
    }
    return simulation, check


def refuse_before_signing(
    options: TransactOptions, result: Result, check: Check | None, hooks: Hooks, *, signing: bool = True
) -> None:
    """Nothing is signed that does not do what was asked: every refusal here comes before any signature.
    Not `signing` (every signature is there already), no intent need be stated."""
    sim = result["simulation"]
    if (options.sign or options.send) and sim and not sim.get("skipped") and not sim["ok"]:
        raise with_report(
            SimulationFailed(f"the simulation failed, nothing was signed or sent: {sim['error']}", kind="simulation"),
            result,
            "simulation-failed",
        )
    if check is None:
        # No simulation, no signature: what the transaction does could not be proven, whatever is asked.
        if options.sign or options.send:
            why = (
                "the simulation was turned off"
                if not options.simulate
                else ("the simulation failed" if sim and not sim.get("skipped") else "the simulation could not run")
            )
            detail = f": {sim['skipped']}" if sim and sim.get("skipped") else ""
            refusal = SimulationFailed if options.simulate else Refused
            raise with_report(
                refusal(
                    f"refusing to sign: what the transaction does could not be checked ({why}{detail}); "
                    "nothing was signed",
                    kind="refused.unchecked",
                    hint="a transaction is signed only after its simulation proves its effect; check that the "
                    "RPC can be reached and that every account the transaction names exists",
                ),
                result,
                "refused",
            )
        return
    if check.ok:
        return
    if options.unsafe_allow_mismatch:
        hooks.allowed_mismatch(list(check.differences))
        return
    precompiles = [v.reason for v in check.instructions if v.kind == "precompile" and not v.ok]
    if precompiles and signing:
        # Each signature a precompile declares is charged as one of the message's: refused by name, on every face.
        raise with_report(
            Refused(
                "refusing to sign: " + "; ".join(precompiles),
                hint="nothing was signed; no request needs a signature-verification precompile",
                kind="refused.precompile",
            ),
            result,
            "refused",
        )
    if not kind_named(str(check.expected.get("action"))).asset:  # nothing stated: it may only cost fees
        if not signing:
            return
        raise with_report(
            Refused(
                "refusing to sign: the transaction does more than pay the network fee, "
                "and no intent was stated: " + "; ".join(check.differences),
                kind="refused.mismatch.unstated",
            ),
            result,
            "refused",
        )
    message = "refusing to sign: the transaction does not do what was asked: " + "; ".join(check.differences)
    if check.untrusted:  # the command line's hint says how to trust it: none from here
        raise with_report(untrusted_refusal(message, check.untrusted, check.expected), result, "refused")
    raise with_report(
        Refused(message, hint="nothing was signed; the service may be faulty or compromised", kind="refused.mismatch"),
        result,
        "refused",
    )


def message_of(tx: VersionedTransaction) -> Message | MessageV0:
    """The legacy or v0 message: the only versions the review, the fee and the nonce checks read."""
    message = tx.message
    if not isinstance(message, (Message, MessageV0)):
        raise UsageError(f"unsupported transaction message version: {type(message).__name__}", kind="usage.tx_version")
    return message


def unreachable(exc: NetworkError) -> Result:
    """The simulation's entry when the RPC could not be reached: not checked, for that reason."""
    return {"skipped": f"{RPC_UNREACHABLE}: {exc.message}"}


async def lookup_tables(rpc: Any, tx: VersionedTransaction) -> tuple[AddressLookupTableAccount, ...]:
    """The tables a v0 message loads accounts from, so the review names every account.

    A table that is not there is not fatal: the review then says which accounts it could not resolve.
    An RPC that cannot be reached raises NetworkError: then nothing can be checked, and that is the reason.
    """
    from yieldcli.chain.tx.instructions import fetch_lookup_table

    tables = []
    for lookup in getattr(tx.message, "address_table_lookups", None) or ():
        try:
            tables.append(await fetch_lookup_table(rpc, lookup.account_key))
        except NetworkError:
            raise
        except YieldError:
            continue
    return tuple(tables)


async def deadline_for(rpc: Any, tx: VersionedTransaction) -> int | None:
    """The block height after which `tx` can no longer land; None for a durable-nonce transaction.

    A transaction from the service carries its blockhash but not its deadline; the latest
    blockhash's deadline is never earlier, so waiting until it passes cannot call a live
    transaction expired. A blockhash that is already invalid is refused before signing; so is a
    nonce that has moved on (a nonce transaction has no block-height deadline: it lives as long
    as its nonce).
    """
    from yieldcli.chain.tx.nonce import nonce_lifetime, nonce_moved_on

    lifetime = nonce_lifetime(message_of(tx))
    if lifetime is not None:
        if await nonce_moved_on(rpc, lifetime):
            raise TransactionExpired(
                f"the transaction's durable nonce {lifetime.value} is no longer the value of nonce account "
                f"{lifetime.account}: it was used or advanced; nothing was signed or sent",
                hint="build the transaction again on the nonce's current value",
                kind="tx.expired.nonce",
            )
        return None
    blockhash = tx.message.recent_blockhash
    if not await rpc.is_blockhash_valid(blockhash):
        raise TransactionExpired(
            f"the transaction's blockhash {blockhash} has expired; nothing was signed or sent",
            hint="request a new transaction",
            kind="tx.expired.blockhash",
        )
    last_valid: int = (await rpc.latest_blockhash()).last_valid_block_height
    return last_valid
