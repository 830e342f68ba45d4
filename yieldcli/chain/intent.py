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
from dataclasses import dataclass, field
from typing import Any

from solders.pubkey import Pubkey

from yieldcli.amounts import format_units
from yieldcli.chain.state import State, TokenState, rent_exempt_minimum
from yieldcli.tokens import WSOL_MINT, by_mint

DEFAULT_MAX_SOL_COST = 10_000_000  # 0.01 SOL: fee plus rent a transaction may take without a flag
MAX_WITHDRAW_FEE_BPS = 100  # a withdrawal fee taken from the position on the way out: at most 1 %


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action, "wallet": self.wallet, "payer": self.payer, "mint": self.mint,
            "amount": "all" if self.amount is None else self.amount, "strategy": self.strategy,
            "exclude_fees": self.exclude_fees, "unwrap": self.unwrap, "max_sol_cost": self.max_sol_cost,
        }


@dataclass(frozen=True)
class Check:
    """The verdict: expected and observed effect, every difference, and the one-line summary."""

    expected: dict[str, Any]
    observed: dict[str, Any]
    differences: tuple[str, ...]
    summary: str

    @property
    def ok(self) -> bool:
        return not self.differences

    def to_dict(self) -> dict[str, Any]:
        return {"expected": self.expected, "observed": self.observed, "differences": list(self.differences), "summary": self.summary}


def short(address: str) -> str:
    return f"{address[:4]}…{address[-4:]}" if len(address) > 12 else address


def amount_text(raw: int, mint: str | None, decimals: Mapping[str, int]) -> str:
    """`10 USDC`, `0.000005 SOL` (mint None), or base units when the decimals are unknown."""
    if mint is None:
        return f"{format_units(raw, 9, min_fraction=0)} SOL"
    known = by_mint(mint)
    places = known.decimals if known else decimals.get(mint)
    name = known.symbol if known else short(mint)
    if places is None:
        return f"{raw} base units of {name}"
    return f"{format_units(raw, places, min_fraction=0)} {name}"


def _symbol(mint: str) -> str:
    known = by_mint(mint)
    return known.symbol if known else short(mint)


def _signed(raw: int, mint: str | None, decimals: Mapping[str, int]) -> str:
    # The minus sign the tables use too (amounts.format_units): one way to write an amount everywhere.
    return ("-" if raw < 0 else "+") + amount_text(abs(raw), mint, decimals)


@dataclass
class _Observed:
    intent: Intent
    before: Mapping[str, State | None]
    after: Mapping[str, State | None]
    decimals: Mapping[str, int]
    fee: int
    # Token multisigs owning accounts involved: (required signatures, signers) by address
    multisigs: Mapping[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)
    user: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        wallet = self.intent.wallet
        self.user = {wallet, self.intent.payer} | {
            a for a in self.before
            if any(s is not None and s.token is not None and s.token.owner == wallet for s in (self.before[a], self.after.get(a)))
        }

    def lamports(self, address: str, side: Mapping[str, State | None]) -> int:
        state = side.get(address)
        return state.lamports if state else 0

    def gain(self, address: str) -> int:
        return self.lamports(address, self.after) - self.lamports(address, self.before)

    def user_sol(self) -> int:
        return sum(self.gain(a) for a in self.user)

    def held(self, address: str, side: Mapping[str, State | None]) -> TokenState | None:
        """The token state, counted as the user's only while the wallet owns it."""
        state = side.get(address)
        token = state.token if state else None
        return token if token is not None and token.owner == self.intent.wallet else None

    def tokens(self) -> dict[str, int]:
        change: dict[str, int] = {}
        for a in self.user:
            for sign, side in ((-1, self.before), (1, self.after)):
                token = self.held(a, side)
                if token is not None:
                    change[token.mint] = change.get(token.mint, 0) + sign * token.amount
        return {m: d for m, d in change.items() if d}

    def held_before(self, mint: str) -> int:
        return sum(t.amount for a in self.user if (t := self.held(a, self.before)) is not None and t.mint == mint)

    def opened_rent(self, address: str) -> int:
        """Rent put into an account this transaction opens (wrapped SOL in it is not rent)."""
        state = self.after.get(address)
        if self.before.get(address) is not None or state is None:
            return 0
        native = state.token.amount if state.token is not None and state.token.native else 0
        return max(min(state.lamports - native, rent_exempt_minimum(state.size)), 0)

    def held_for_user(self, address: str) -> bool:
        """A token account the strategy holds for the user: the wallet may spend or close it, or a program owns it."""
        state = self.after.get(address)
        token = state.token if state else None
        if token is None:
            return False
        if self.intent.wallet in (token.delegate, token.close_authority) or self.wallet_alone_signs_for(token.owner):
            return True
        return not Pubkey.from_string(token.owner).is_on_curve()

    def wallet_alone_signs_for(self, owner: str) -> bool:
        """`owner` is a token multisig the wallet can sign for by itself (one signature required)."""
        found = self.multisigs.get(owner)
        return found is not None and found[0] == 1 and self.intent.wallet in found[1]

    def position(self, address: str) -> TokenState | None:
        """A fund account of the user's position: not the wallet's, but the wallet may spend or close it,
        or a program holds it (a strategy's vault, whose program pays out on the user's signature)."""
        for side in (self.before, self.after):
            state = side.get(address)
            token = state.token if state else None
            if token is not None and token.owner != self.intent.wallet and (
                self.intent.wallet in (token.delegate, token.close_authority) or self.wallet_alone_signs_for(token.owner)
                or not Pubkey.from_string(token.owner).is_on_curve()
            ):
                return token
        return None

    def token_gain(self, address: str) -> int:
        amounts = [s.token.amount if s is not None and s.token is not None else 0 for s in (self.before.get(address), self.after.get(address))]
        return amounts[1] - amounts[0]


def compare(intent: Intent, before: Mapping[str, State | None], after: Mapping[str, State | None],
            *, fee: int, decimals: Mapping[str, int] | None = None,
            multisigs: Mapping[str, tuple[int, tuple[str, ...]]] | None = None, priority_fee: int = 0) -> Check:
    """The verdict on a simulated transaction; `before`/`after` cover every account it may write."""
    decimals = dict(decimals or {})
    seen = _Observed(intent, before, after, decimals, fee, dict(multisigs or {}))
    rent = sum(seen.opened_rent(a) for a in after)
    foreign_rent = sum(seen.opened_rent(a) for a in after if a not in seen.user)
    allowance = fee + foreign_rent
    sol, tokens = seen.user_sol(), seen.tokens()
    diffs: list[str] = []
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
        diffs.append(f"fee and rent come to {amount_text(cost, None, decimals)}, more than the "
                     f"{amount_text(intent.max_sol_cost, None, decimals)} allowed")
    diffs += _destinations(intent, seen, sol, tokens, allowance, decimals)
    diffs += _authorities(seen, decimals)
    diffs += _positions(seen, decimals)
    # Shown apart: SOL in the wallet and payer, and each token (wrapped SOL by that name).
    native = sum(seen.gain(a) for a in {intent.wallet, intent.payer})
    changes = [{"asset": "SOL", "mint": None, "change": native, "text": _signed(native, None, decimals)}]
    changes += [{"asset": "wrapped SOL" if m == WSOL_MINT else _symbol(m), "mint": m, "change": d,
                 "text": _signed(d, m, decimals) + (" (wrapped)" if m == WSOL_MINT else "")} for m, d in sorted(tokens.items())]
    observed = {
        "sol": sol, "tokens": tokens, "fee": fee, "rent": rent, "changes": changes,
        "accounts": [_account_change(seen, a) for a in after if seen.gain(a) or before.get(a) != after.get(a)],
    }
    return Check(intent.to_dict(), observed, tuple(dict.fromkeys(diffs)), summary(intent, fee, rent, decimals, changes, priority_fee))


def _amount_rules(intent: Intent, seen: _Observed, sol: int, tokens: dict[str, int], allowance: int, decimals: Mapping[str, int]) -> list[str]:
    diffs = []
    mint, amount, action = intent.mint, intent.amount, intent.action
    wsol = mint == WSOL_MINT
    # For wrapped SOL the user's SOL and WSOL are one balance: its change is `sol` (lamports of all the user's accounts).
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
            expected = "everything" if amount is None and wsol else _signed(-(want or 0), shown, decimals)
            diffs.append(f"expected {expected}, simulated {_signed(moved, shown, decimals)}")
    elif action == "withdraw" and mint is not None:
        low = amount - slack if amount is not None and intent.exclude_fees else -slack
        if moved < low or (amount is not None and moved > amount):
            asked = "any increase" if amount is None else (
                _signed(amount, shown, decimals) if intent.exclude_fees else f"at most {_signed(amount, shown, decimals)}")
            diffs.append(f"expected {asked}, simulated {_signed(moved, shown, decimals)}")
    for other, change in sorted(tokens.items()):
        if change >= 0 or other == mint:
            continue  # the target mint has its rule above
        if other == WSOL_MINT and (wsol or sol >= -allowance):
            continue  # wrapped SOL back in the wallet as SOL: the SOL rule covers it
        diffs.append(f"your {_symbol(other)} falls by {amount_text(-change, other, decimals)}, not asked for")
    return diffs


def _destinations(intent: Intent, seen: _Observed, sol: int, tokens: dict[str, int], allowance: int, decimals: Mapping[str, int]) -> list[str]:
    """Where what left the user went: only into accounts the strategy holds for the user."""
    diffs = []
    falling = {m for m, d in tokens.items() if d < 0}
    for address in seen.after:
        if address in seen.user:
            continue
        before, after = seen.before.get(address), seen.after.get(address)
        token_after = after.token if after else None
        if token_after is not None and token_after.mint in falling:
            gained = token_after.amount - (before.token.amount if before and before.token else 0)
            if gained > 0 and not seen.held_for_user(address):
                diffs.append(f"{amount_text(gained, token_after.mint, decimals)} to {short(address)} "
                             f"(owned by {short(token_after.owner)}), not asked for")
    wsol_out = intent.mint == WSOL_MINT and intent.action == "deposit"
    named = 0
    if sol < -allowance or wsol_out:
        for address in seen.after:
            gained = seen.gain(address)
            if address in seen.user or gained - seen.opened_rent(address) <= 0 or (wsol_out and seen.held_for_user(address)):
                continue
            after = seen.after.get(address)
            token = after.token if after is not None else None
            if token is not None and token.mint in falling and not token.native:
                continue  # already named as tokens above
            diffs.append(f"{amount_text(gained, None, decimals)} to {short(address)}, not asked for")
            named += 1
    if sol < -allowance and not named and not (intent.mint == WSOL_MINT):
        diffs.append(f"{amount_text(-sol - allowance, None, decimals)} leaves your accounts beyond the network fee and rent")
    return diffs


def _positions(seen: _Observed, decimals: Mapping[str, int]) -> list[str]:
    """What leaves the user's position goes to the user; only a withdrawal may pay a fee, at most 1 %."""
    diffs = []
    for mint in sorted({t.mint for a in seen.after if (t := seen.position(a)) is not None}):
        left = -sum(min(seen.token_gain(a), 0) for a in seen.after if (t := seen.position(a)) is not None and t.mint == mint)
        if left <= 0:
            continue
        allowed = -(-left * MAX_WITHDRAW_FEE_BPS // 10_000) if seen.intent.action == "withdraw" else 0
        others = [(a, gain) for a in seen.after if a not in seen.user and seen.position(a) is None
                  and (state := seen.after.get(a)) is not None and state.token is not None and state.token.mint == mint
                  and (gain := seen.token_gain(a)) > 0]
        if sum(gain for _, gain in others) > allowed:
            for address, gain in others:
                diffs.append(f"{amount_text(gain, mint, decimals)} of your position to {short(address)}, not asked for")
    return diffs


def _authorities(seen: _Observed, decimals: Mapping[str, int]) -> list[str]:
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
        name = _symbol(token.mint)
        if now is not None and now.owner != seen.intent.wallet:
            diffs.append(f"SetAuthority: your {name} account {short(address)} would belong to {short(now.owner)}")
            continue
        if now is not None and now.delegate is not None and (
            was is None or now.delegate != was.delegate or now.delegated_amount > was.delegated_amount
        ):
            diffs.append(f"Approve: {short(now.delegate)} may spend {now.delegated_amount} of your {name}")
        if now is not None and now.close_authority not in (None, seen.intent.wallet) and (
            was is None or now.close_authority != was.close_authority
        ):
            diffs.append(f"SetAuthority: {short(now.close_authority)} may close your {name} account {short(address)}")
        before = seen.before.get(address)
        if was is not None and state is None and before is not None:
            lamports = before.lamports
            if user_gain < lamports:
                takers = [a for a in seen.after if a not in seen.user and seen.gain(a) > 0]
                to = ", ".join(short(a) for a in takers) or "someone else"
                diffs.append(f"CloseAccount: your {name} account {short(address)} is closed and its "
                             f"{amount_text(lamports, None, decimals)} go to {to}")
    return diffs


def _account_change(seen: _Observed, address: str) -> dict[str, Any]:
    def side(state: State | None) -> dict[str, Any] | None:
        if state is None:
            return None
        token = state.token
        return {"lamports": state.lamports, "token": None if token is None else {
            "mint": token.mint, "owner": token.owner, "amount": token.amount, "delegate": token.delegate,
            "delegated_amount": token.delegated_amount, "close_authority": token.close_authority}}

    return {"address": address, "user": address in seen.user, "lamports_change": seen.gain(address),
            "before": side(seen.before.get(address)), "after": side(seen.after.get(address))}


def summary(intent: Intent, fee: int, rent: int, decimals: Mapping[str, int] | None = None,
            changes: Sequence[Mapping[str, Any]] = (), priority_fee: int = 0) -> str:
    """`deposit 10 USDC from 5PJ1…Vr9k to strategy X; fee 0.000005551 SOL (priority 0.000000551); rent 0.00203928 SOL`."""
    decimals = decimals or {}
    what = "everything" if intent.amount is None else amount_text(intent.amount, intent.mint, decimals)
    if intent.amount is None and intent.mint:
        what = f"all {_symbol(intent.mint)}"
    strategy = f"strategy {intent.strategy}" if intent.strategy else "the strategy"
    if intent.action == "deposit":
        head = f"deposit {what} from {short(intent.wallet)} to {strategy}"
    elif intent.action == "withdraw":
        extras = [x for x, on in (("fees excluded", intent.exclude_fees), ("unwrapped to SOL", intent.unwrap)) if on]
        head = f"withdraw {what} from {strategy} to {short(intent.wallet)}" + (f" ({', '.join(extras)})" if extras else "")
    elif intent.action == "close-account":
        asset = f" {_symbol(intent.mint)}" if intent.mint else ""
        head = f"close the{asset} fund account of {short(intent.wallet)} in {strategy}"
    else:
        seen = ", ".join(c["text"] for c in changes if c["change"]) or "no change"
        head = f"transaction for {short(intent.wallet)}: {seen}"
    parts = [head, f"fee {amount_text(fee, None, decimals)}"
             + (f" (priority {format_units(priority_fee, 9, min_fraction=0)})" if priority_fee else "")]
    if rent:
        parts.append(f"rent {amount_text(rent, None, decimals)}")
    return "; ".join(parts)
