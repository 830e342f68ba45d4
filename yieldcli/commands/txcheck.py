"""The intent check inside the transaction flow: what the user asked, the simulation, and the verdict.

Everything here runs before any signature and before the prompt; `guard` is the one place that
turns a mismatch, a failed simulation or a missing check into a refusal.
"""

from __future__ import annotations

from typing import Any

from yieldcli.errors import NetworkError, Refused, SimulationFailed


async def budget(session, rpc, options, obtained):
    """Set the priority fee and compute-unit limit (replacing `obtained.transaction`), check --max-fee:
    the fees the final transaction pays, or None when they cannot be read (no --max-fee to enforce)."""
    from solders.signature import Signature

    from yieldcli.chain.compute_budget import budget_transaction, check_auto_ceiling, fee_summary
    from yieldcli.errors import YieldError

    tx, tables = obtained.transaction, obtained.lookup_tables
    price = options.priority_fee
    if price is not None and options.priority_fee_source != "flag" and any(s != Signature.default() for s in tx.signatures):
        # A default from the environment or the profile cannot apply: recompiling would void the signatures.
        session.log(f"priority fee from {options.priority_fee_source} not applied: the transaction already carries signatures")
        price = None
    if rpc is None and price is None:
        try:
            return fee_summary(tx.message, tables)
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
        session.log(f"compute units: {budgeted.units_consumed} simulated, limit {budgeted.fees.unit_limit}; "
                    f"price {budgeted.fees.unit_price} micro-lamports per unit ({price if price == 'auto' else 'given'})")
    obtained.transaction = budgeted.transaction
    return budgeted.fees


def fee_dict(fees) -> dict[str, int] | None:
    """The fee as the review and `-o json` show it: lamports, the limit and the price per unit."""
    if fees is None:
        return None
    return {"base": fees.base_fee, "priority": fees.priority_fee, "total": fees.total,
            "compute_unit_limit": fees.unit_limit, "compute_unit_price": fees.unit_price}


def intent_of(subject, options, review, keypair):
    """What the user asked, for the guard: whoever signs is the user; without an action, only paying fees."""
    from yieldcli.chain.intent import DEFAULT_MAX_SOL_COST, Intent

    signer = str(keypair.pubkey()) if keypair is not None else None
    action = subject.action if subject.action in ("deposit", "withdraw", "close-account") else "transaction"
    wallet = (signer or review.fee_payer) if action == "transaction" else (subject.wallet or signer or review.fee_payer)
    payer = subject.expected_payer or review.fee_payer
    return Intent(
        action=action, wallet=wallet, payer=payer, mint=subject.mint, amount=subject.amount,
        strategy=subject.strategy_id, exclude_fees=subject.exclude_fees, unwrap=subject.unwrap,
        max_sol_cost=_max_sol_cost(options, DEFAULT_MAX_SOL_COST),
    )


def _max_sol_cost(options, default: int) -> int:
    """--max-sol-cost; without it, the default rent allowance plus the fee --max-fee allows."""
    if options.max_sol_cost is not None:
        return options.max_sol_cost
    return default + (options.max_fee or 0)


async def simulate(rpc, tx, lookup_tables, intent, subject, options):
    """The simulation for the review and the intent check of the exact transaction: `(simulation, check)`."""
    from yieldcli import tokens
    from yieldcli.chain.intent_check import check_transaction
    from yieldcli.solana.transaction_errors import describe_error

    tables = {str(t.key): [str(a) for a in t.addresses] for t in lookup_tables or ()}
    try:
        check, sim = await check_transaction(rpc, tx, intent, tables)
    except NetworkError as exc:  # --send is then refused by `guard`: it needs the check
        return {"skipped": f"the RPC could not be reached: {exc.message}"}, None
    except ValueError as exc:  # a lookup table could not be read: the accounts it loads are unknown
        return {"skipped": f"the transaction's accounts could not all be resolved: {exc}"}, None

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
    simulation = {
        "ok": sim.ok,
        "error": None if sim.ok else describe_error(sim.err),
        "err": sim.err,
        "logs": list(sim.logs),
        "units_consumed": sim.units_consumed,
        "token_balance_changes": changes,
    }
    return simulation, check


def guard(session, out, options, result: dict[str, Any], check) -> None:
    """Nothing is signed that does not do what was asked: every refusal here comes before any signature."""
    sim = result["simulation"]
    if options.send and sim and not sim.get("skipped") and not sim["ok"]:
        _finish_refused(out, result, "simulation-failed")
        raise SimulationFailed(
            f"the simulation failed, nothing was signed or sent: {sim['error']}",
            hint="run without --send to see the logs",
        )
    if check is None:
        if options.send and not options.unsafe_allow_mismatch:
            _finish_refused(out, result, "refused")
            why = "--no-simulate was given" if not options.simulate else (
                "the simulation failed" if sim and not sim.get("skipped") else "the simulation could not run")
            raise Refused(
                f"refusing to send: what the transaction does could not be checked ({why})",
                hint="--send needs the check: drop --no-simulate and use a reachable RPC (--url), or --sign only",
            )
        if options.sign or options.send:
            session.output().warn("what the transaction does was not checked against your request")
        return
    if check.ok:
        return
    if options.unsafe_allow_mismatch and session.env.interactive:
        session.output().warn("--unsafe-allow-mismatch: the transaction does NOT do what was asked:")
        for difference in check.differences:
            session.env.stderr.write(f"  ✗ {difference}\n")
        return
    _finish_refused(out, result, "refused")
    raise Refused(
        "refusing to sign: the transaction does not do what was asked: " + "; ".join(check.differences),
        hint="nothing was signed; the service may be faulty or compromised",
    )


def _finish_refused(out, result: dict[str, Any], status: str) -> None:
    """In JSON modes, the review and the effect still reach stdout, so scripts see the differences."""
    if out.mode != "table":
        from yieldcli.commands.txflow import _finish

        result["status"] = status
        _finish(out, result, None)
