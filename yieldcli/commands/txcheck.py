"""The intent check inside the transaction flow: what the user asked, the simulation, and the verdict.

Everything here runs before any signature and before the prompt; `guard` is the one place that
turns a mismatch, a failed simulation or a missing check into a refusal.
"""

from __future__ import annotations

from typing import Any

from yieldcli.errors import NetworkError, Refused, SimulationFailed


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
        max_sol_cost=DEFAULT_MAX_SOL_COST if options.max_sol_cost is None else options.max_sol_cost,
    )


async def simulate(rpc, tx, lookup_tables, intent, subject, options):
    """The simulation for the review and the intent check of the exact transaction: `(simulation, check)`."""
    from yieldcli import tokens
    from yieldcli.chain.intent import check_transaction
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
