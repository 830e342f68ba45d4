"""The intent guard: does the transaction do what the user asked, and nothing else?

From the request (`Intent`) we know the expected effect; from a simulation of the exact
transaction, with every account it can write read before and returned after, we know the
observed one. `compare` turns both into differences a person can read; an empty list is the only
"yes". The wallet, the payer and every token account the wallet owns (before or after) are the
user's; their lamports together are the user's SOL, so SOL moved between them (rent into a new
token account of the user, a wrapped-SOL account closed back to the wallet) is not a loss.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from yieldcli.amounts import format_units
from yieldcli.chain.instruction_rules import NEEDED, Resolved, Verdict, verdicts
from yieldcli.chain.intent_text import amount_text, short, signed, symbol
from yieldcli.chain.observed import Observed, controlled_unchanged, destinations, strategy_payouts
from yieldcli.chain.state import State
from yieldcli.chain.value_flow import Inner
from yieldcli.tokens import WSOL_MINT

DEFAULT_MAX_SOL_COST = 10_000_000  # 0.01 SOL: fee plus rent a transaction may take without a flag


@dataclass(frozen=True)
class Intent:
    """What the user asked for. `amount` is in base units; None means --all."""

    action: str  # deposit, withdraw or close-account
    wallet: str
    payer: str
    mint: str | None = None
    amount: int | None = None
    strategy: str | None = None
    exclude_fees: bool = False
    unwrap: bool = False
    max_sol_cost: int = DEFAULT_MAX_SOL_COST
    strategy_program: str | None = None  # the program pinned for this cluster: the only one trusted to move value
    funds_recipient: str | None = None  # close-account: where the user asked the position's remainder to go
    # A deposit's destinations trusted on this cluster for this strategy and mint: (token account, mint).
    trusted: tuple[tuple[str, str], ...] = ()
    trust_file: str | None = None  # where the user's trusted destinations are kept (`yieldcli.trust`)

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "wallet": self.wallet,
            "payer": self.payer,
            "mint": self.mint,
            "amount": "all" if self.amount is None else self.amount,
            "strategy": self.strategy,
            "exclude_fees": self.exclude_fees,
            "unwrap": self.unwrap,
            "max_sol_cost": self.max_sol_cost,
            "strategy_program": self.strategy_program,
            "recipient": self.funds_recipient,
            "trusted_destinations": [{"destination": d, "mint": m} for d, m in self.trusted],
        }


@dataclass(frozen=True)
class Check:
    """The verdict: expected and observed effect, every difference, and the one-line summary."""

    expected: dict[str, Any]
    observed: dict[str, Any]
    differences: tuple[str, ...]
    summary: str
    instructions: tuple[Verdict, ...] = ()
    verified: tuple[str, ...] = ()

    @property
    def untrusted(self) -> tuple[str, ...]:
        """Destinations of refused plain transfers that would pass if the user trusted them (a deposit's)."""
        return tuple(dict.fromkeys(v.untrusted for v in self.instructions if v.untrusted and not v.ok))

    @property
    def ok(self) -> bool:
        return not self.differences

    def to_dict(self) -> dict[str, Any]:
        return {
            "expected": self.expected,
            "observed": self.observed,
            "differences": list(self.differences),
            "summary": self.summary,
            "instructions": [v.to_dict() for v in self.instructions],
            "verified": list(self.verified),
            "untrusted_destinations": list(self.untrusted),
        }


def compare(
    intent: Intent,
    before: Mapping[str, State | None],
    after: Mapping[str, State | None],
    *,
    fee: int,
    decimals: Mapping[str, int] | None = None,
    resolved: Resolved | None = None,
    inner: Inner | None = None,
    priority_fee: int = 0,
) -> Check:
    """The verdict on a simulated transaction; `before`/`after` cover every account it may write,
    `resolved` is its message and `inner` the simulation's inner instructions."""
    decimals = dict(decimals or {})
    seen = Observed(intent, before, after, decimals, fee, resolved, dict(inner or {}))
    rent = sum(seen.opened_rent(a) for a in after)
    allowance = fee + sum(seen.own_rent(a) for a in after)
    sol, tokens = seen.user_sol(), seen.tokens()
    diffs: list[str] = []
    verdicts_ = tuple(verdicts(resolved, seen.context())) if resolved is not None else ()
    if intent.action in NEEDED:
        diffs += [v.reason for v in verdicts_ if not v.ok]
    wsol = intent.mint == WSOL_MINT
    diffs += _amount_rules(intent, seen, sol, tokens, allowance, decimals)
    if not wsol:
        spent = max(-sol, 0)
    elif intent.action == "deposit" and intent.amount is not None:
        spent = max(-sol - intent.amount, 0)
    else:
        spent = allowance  # SOL and wrapped SOL are one balance: the costs cannot be told from the amount
    cost = max(fee, min(spent, allowance))  # the fee the message sets is charged, whatever a simulator shows
    if cost > intent.max_sol_cost:
        diffs.append(
            f"fee and rent come to {amount_text(cost, None, decimals)}, more than the "
            f"{amount_text(intent.max_sol_cost, None, decimals)} allowed"
        )
    diffs += destinations(seen, tokens, decimals)
    diffs += strategy_payouts(seen, decimals)
    diffs += _authorities(seen, decimals)
    diffs += controlled_unchanged(seen, resolved)
    # Shown apart: SOL in the wallet and payer, and each token (wrapped SOL by that name).
    native = sum(seen.gain(a) for a in {intent.wallet, intent.payer})
    changes = [{"asset": "SOL", "mint": None, "change": native, "text": signed(native, None, decimals)}]
    changes += [
        {
            "asset": "wrapped SOL" if m == WSOL_MINT else symbol(m),
            "mint": m,
            "change": d,
            "text": signed(d, m, decimals) + (" (wrapped)" if m == WSOL_MINT else ""),
        }
        for m, d in sorted(tokens.items())
    ]
    observed = {
        "sol": sol,
        "tokens": tokens,
        "fee": fee,
        "rent": rent,
        "changes": changes,
        "accounts": [_account_change(seen, a) for a in after if seen.gain(a) or before.get(a) != after.get(a)],
        "strategy_transfers": [
            {
                "instruction": m.top_level,
                "from": m.source,
                "to": m.destination,
                "amount": m.amount,
                "asset": "SOL" if m.lamports else "token",
            }
            for m in seen.moves
        ],
    }
    verified = _verified(intent, seen, verdicts_)
    return Check(
        intent.to_dict(),
        observed,
        tuple(dict.fromkeys(diffs)),
        summary(intent, fee, rent, decimals, changes, priority_fee),
        verdicts_,
        verified,
    )


def _verified(intent: Intent, seen: Observed, verdicts_: tuple[Verdict, ...]) -> tuple[str, ...]:
    pinned = intent.strategy_program
    facts = [
        f"the strategy program trusted is {pinned} (pinned for this cluster, not taken from the service)"
        if pinned
        else "no strategy program is trusted: nothing may move value to anyone else"
    ]
    if verdicts_:
        facts.append(
            f"{len(verdicts_)} instruction(s), each one an allowed program and kind where it uses your authority"
        )
    facts.append(
        f"your accounts: {len(seen.user)} (wallet, payer, token accounts), "
        f"and {len(seen.controlled)} more your keys control"
    )
    facts.append(
        f"{len(seen.moves)} transfer(s) made by the strategy program, read from the simulation's inner instructions"
    )
    if seen.trusted_received:
        received = ", ".join(
            f"{amount_text(n, intent.mint, seen.decimals)} to {short(a)}" for a, n in seen.trusted_received.items()
        )
        facts.append(f"plain transfer(s) to destinations you trust for this strategy on this cluster: {received}")
    return tuple(facts)


def _amount_rules(
    intent: Intent, seen: Observed, sol: int, tokens: dict[str, int], allowance: int, decimals: Mapping[str, int]
) -> list[str]:
    diffs = []
    mint, amount, action = intent.mint, intent.amount, intent.action
    wsol = mint == WSOL_MINT
    # For wrapped SOL the user's SOL and WSOL are one balance: its change is `sol` (lamports of all the
    # user's accounts).
    moved = sol if wsol else tokens.get(mint or "", 0)
    slack = allowance if wsol else 0
    shown = None if wsol else mint
    if action == "deposit" and mint is not None:
        want = seen.held_before(mint) if amount is None and not wsol else amount
        if want is None:
            ok = moved < 0
        else:
            ok = -want - slack <= moved <= -want
        if not ok:
            expected = "everything" if amount is None and wsol else signed(-(want or 0), shown, decimals)
            diffs.append(f"expected {expected}, simulated {signed(moved, shown, decimals)}")
    elif action == "withdraw" and mint is not None:
        low = amount - slack if amount is not None and intent.exclude_fees else -slack
        if moved < low or (amount is not None and moved > amount):
            asked = (
                "any increase"
                if amount is None
                else (
                    signed(amount, shown, decimals)
                    if intent.exclude_fees
                    else f"at most {signed(amount, shown, decimals)}"
                )
            )
            diffs.append(f"expected {asked}, simulated {signed(moved, shown, decimals)}")
    for other, change in sorted(tokens.items()):
        if change >= 0 or other == mint:
            continue  # the target mint has its rule above
        if other == WSOL_MINT and (wsol or sol >= -allowance):
            continue  # wrapped SOL back in the wallet as SOL: the SOL rule covers it
        diffs.append(f"your {symbol(other)} falls by {amount_text(-change, other, decimals)}, not asked for")
    return diffs


def _authorities(seen: Observed, decimals: Mapping[str, int]) -> list[str]:
    """No token account of the user gains a delegate or new owner or close authority, or is closed away."""
    diffs = []
    user_gain = sum(seen.gain(a) for a in (seen.intent.wallet, seen.intent.payer)) + seen.fee
    for address in sorted(seen.user):
        was = seen.held(address, seen.before)
        state = seen.after.get(address)
        now = state.token if state else None
        token = was or now
        if token is None:
            continue
        name = symbol(token.mint)
        if now is not None and now.owner != seen.intent.wallet:
            diffs.append(f"SetAuthority: your {name} account {short(address)} would belong to {short(now.owner)}")
            continue
        if (
            now is not None
            and now.delegate is not None
            and (was is None or now.delegate != was.delegate or now.delegated_amount > was.delegated_amount)
        ):
            diffs.append(f"Approve: {short(now.delegate)} may spend {now.delegated_amount} of your {name}")
        if (
            now is not None
            and now.close_authority not in (None, seen.intent.wallet)
            and (was is None or now.close_authority != was.close_authority)
        ):
            diffs.append(f"SetAuthority: {short(now.close_authority)} may close your {name} account {short(address)}")
        before = seen.before.get(address)
        if was is not None and state is None and before is not None:
            lamports = before.lamports
            if user_gain < lamports:
                takers = [a for a in seen.after if a not in seen.user and seen.gain(a) > 0]
                to = ", ".join(short(a) for a in takers) or "someone else"
                diffs.append(
                    f"CloseAccount: your {name} account {short(address)} is closed and its "
                    f"{amount_text(lamports, None, decimals)} go to {to}"
                )
    return diffs


def _account_change(seen: Observed, address: str) -> dict[str, Any]:
    def side(state: State | None) -> dict[str, Any] | None:
        if state is None:
            return None
        token = state.token
        return {
            "lamports": state.lamports,
            "token": None
            if token is None
            else {
                "mint": token.mint,
                "owner": token.owner,
                "amount": token.amount,
                "delegate": token.delegate,
                "delegated_amount": token.delegated_amount,
                "close_authority": token.close_authority,
            },
        }

    return {
        "address": address,
        "user": address in seen.user,
        "controlled": seen.controlled.get(address),
        "lamports_change": seen.gain(address),
        "before": side(seen.before.get(address)),
        "after": side(seen.after.get(address)),
    }


def summary(
    intent: Intent,
    fee: int,
    rent: int,
    decimals: Mapping[str, int] | None = None,
    changes: Sequence[Mapping[str, Any]] = (),
    priority_fee: int = 0,
) -> str:
    """One line, such as
    `deposit 10 USDC from 5PJ1…Vr9k to strategy X; fee 0.000005551 SOL (priority 0.000000551); rent 0.00203928 SOL`."""
    decimals = decimals or {}
    what = "everything" if intent.amount is None else amount_text(intent.amount, intent.mint, decimals)
    if intent.amount is None and intent.mint:
        what = f"all {symbol(intent.mint)}"
    strategy = f"strategy {intent.strategy}" if intent.strategy else "the strategy"
    if intent.action == "deposit":
        head = f"deposit {what} from {short(intent.wallet)} to {strategy}"
    elif intent.action == "withdraw":
        extras = [x for x, on in (("fees excluded", intent.exclude_fees), ("unwrapped to SOL", intent.unwrap)) if on]
        head = f"withdraw {what} from {strategy} to {short(intent.wallet)}" + (
            f" ({', '.join(extras)})" if extras else ""
        )
    elif intent.action == "close-account":
        asset = f" {symbol(intent.mint)}" if intent.mint else ""
        head = f"close the{asset} fund account of {short(intent.wallet)} in {strategy}"
    else:
        seen = ", ".join(c["text"] for c in changes if c["change"]) or "no change"
        head = f"transaction for {short(intent.wallet)}: {seen}"
    parts = [
        head,
        f"fee {amount_text(fee, None, decimals)}"
        + (f" (priority {format_units(priority_fee, 9, min_fraction=0)})" if priority_fee else ""),
    ]
    if rent:
        parts.append(f"rent {amount_text(rent, None, decimals)}")
    return "; ".join(parts)
