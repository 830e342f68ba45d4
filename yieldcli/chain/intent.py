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
from decimal import Decimal
from typing import Any

from yieldcli.amounts import scale
from yieldcli.chain.instruction_rules import NEEDED, Context, Resolved, Verdict, verdicts
from yieldcli.chain.state import State, TokenState, rent_exempt_minimum
from yieldcli.chain.value_flow import Inner, Move, authority_kind, position_user, strategy_moves, wallet_token_accounts_opened, wsol_accounts_opened
from yieldcli.solana import programs
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
    strategy_program: str | None = None  # the program pinned for this cluster: the only one trusted to move value
    funds_recipient: str | None = None  # close-account: where the user asked the position's remainder to go

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action, "wallet": self.wallet, "payer": self.payer, "mint": self.mint,
            "amount": "all" if self.amount is None else self.amount, "strategy": self.strategy,
            "exclude_fees": self.exclude_fees, "unwrap": self.unwrap, "max_sol_cost": self.max_sol_cost,
            "strategy_program": self.strategy_program, "funds_recipient": self.funds_recipient,
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
    def ok(self) -> bool:
        return not self.differences

    def to_dict(self) -> dict[str, Any]:
        return {"expected": self.expected, "observed": self.observed, "differences": list(self.differences), "summary": self.summary,
                "instructions": [v.to_dict() for v in self.instructions], "verified": list(self.verified)}


def short(address: str) -> str:
    return f"{address[:4]}…{address[-4:]}" if len(address) > 12 else address


def amount_text(raw: int, mint: str | None, decimals: Mapping[str, int]) -> str:
    """`10 USDC`, `0.000005 SOL` (mint None), or base units when the decimals are unknown."""
    if mint is None:
        return f"{_plain(scale(raw, 9))} SOL"
    known = by_mint(mint)
    places = known.decimals if known else decimals.get(mint)
    name = known.symbol if known else short(mint)
    if places is None:
        return f"{raw} base units of {name}"
    return f"{_plain(scale(raw, places))} {name}"


def _plain(value: Decimal) -> str:
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _symbol(mint: str) -> str:
    known = by_mint(mint)
    return known.symbol if known else short(mint)


def _signed(raw: int, mint: str | None, decimals: Mapping[str, int]) -> str:
    return ("−" if raw < 0 else "+") + amount_text(abs(raw), mint, decimals)


@dataclass
class _Observed:
    intent: Intent
    before: Mapping[str, State | None]
    after: Mapping[str, State | None]
    decimals: Mapping[str, int]
    fee: int
    resolved: Resolved | None
    inner: Inner
    user: set[str] = field(default_factory=set)  # the wallet, the payer, the wallet's token accounts
    controlled: dict[str, str] = field(default_factory=dict)  # every other account the user's keys control: kind
    moves: list[Move] = field(default_factory=list)

    def __post_init__(self) -> None:
        wallet, pinned = self.intent.wallet, self.intent.strategy_program
        opened = wallet_token_accounts_opened(self.resolved, wallet) if self.resolved else set()
        self.user = {wallet, self.intent.payer} | opened | {
            a for a in self.before
            if any(s is not None and s.token is not None and s.token.owner == wallet for s in (self.before[a], self.after.get(a)))
        }
        for address in self.before:
            if address in self.user:
                continue
            kind = authority_kind(self.before.get(address), wallet, pinned) or authority_kind(self.after.get(address), wallet, pinned)
            if kind is not None:
                self.controlled[address] = kind
        self.moves = strategy_moves(self.resolved, self.inner, pinned) if self.resolved else []

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

    def own_rent(self, address: str) -> int:
        """Rent of a new account that is the user's own: the wallet's token accounts, the position the
        pinned program opens (it then holds it for the user), the token account of the recipient the user named."""
        state = self.after.get(address)
        if state is None:
            return 0
        mine = (address in self.user or (state.owner == self.intent.strategy_program and self.controlled.get(address) == "position")
                or (state.token is not None and state.token.owner == self.intent.funds_recipient is not None))
        return self.opened_rent(address) if mine else 0

    def moved_to(self, address: str, *, lamports: bool) -> int:
        return sum(m.amount for m in self.moves if m.destination == address and m.lamports == lamports)

    def token_gain(self, address: str) -> int:
        amounts = [s.token.amount if s is not None and s.token is not None else 0 for s in (self.before.get(address), self.after.get(address))]
        return amounts[1] - amounts[0]

    def context(self) -> Context:
        wsol = {a for a in self.user for s in (self.before.get(a), self.after.get(a)) if s and s.token and s.token.native}
        if self.resolved is not None:
            wsol |= wsol_accounts_opened(self.resolved, self.intent.wallet)
        return Context(self.intent.action, self.intent.wallet, self.intent.payer, self.intent.strategy_program,
                       frozenset(self.user), frozenset(self.user | set(self.controlled)), frozenset(wsol), self.intent.funds_recipient)


def compare(intent: Intent, before: Mapping[str, State | None], after: Mapping[str, State | None],
            *, fee: int, decimals: Mapping[str, int] | None = None, resolved: Resolved | None = None,
            inner: Inner | None = None, priority_fee: int = 0) -> Check:
    """The verdict on a simulated transaction; `before`/`after` cover every account it may write,
    `resolved` is its message and `inner` the simulation's inner instructions."""
    decimals = dict(decimals or {})
    seen = _Observed(intent, before, after, decimals, fee, resolved, dict(inner or {}))
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
        diffs.append(f"fee and rent come to {amount_text(cost, None, decimals)}, more than the "
                     f"{amount_text(intent.max_sol_cost, None, decimals)} allowed")
    diffs += _destinations(seen, tokens, decimals)
    diffs += _strategy_payouts(seen, decimals)
    diffs += _authorities(seen, decimals)
    diffs += _controlled(seen, resolved)
    # Shown apart: SOL in the wallet and payer, and each token (wrapped SOL by that name).
    native = sum(seen.gain(a) for a in {intent.wallet, intent.payer})
    changes = [{"asset": "SOL", "mint": None, "change": native, "text": _signed(native, None, decimals)}]
    changes += [{"asset": "wrapped SOL" if m == WSOL_MINT else _symbol(m), "mint": m, "change": d,
                 "text": _signed(d, m, decimals) + (" (wrapped)" if m == WSOL_MINT else "")} for m, d in sorted(tokens.items())]
    observed = {
        "sol": sol, "tokens": tokens, "fee": fee, "rent": rent, "changes": changes,
        "accounts": [_account_change(seen, a) for a in after if seen.gain(a) or before.get(a) != after.get(a)],
        "strategy_transfers": [{"instruction": m.top_level, "from": m.source, "to": m.destination, "amount": m.amount,
                                "asset": "SOL" if m.lamports else "token"} for m in seen.moves],
    }
    verified = _verified(intent, seen, verdicts_)
    return Check(intent.to_dict(), observed, tuple(dict.fromkeys(diffs)), summary(intent, fee, rent, decimals, changes, priority_fee),
                 verdicts_, verified)


def _verified(intent: Intent, seen: _Observed, verdicts_: tuple[Verdict, ...]) -> tuple[str, ...]:
    pinned = intent.strategy_program
    facts = [f"the strategy program trusted is {pinned} (pinned for this cluster, not taken from the service)" if pinned
             else "no strategy program is trusted: nothing may move value to anyone else"]
    if verdicts_:
        facts.append(f"{len(verdicts_)} instruction(s), each one an allowed program and kind where it uses your authority")
    facts.append(f"your accounts: {len(seen.user)} (wallet, payer, token accounts), and {len(seen.controlled)} more your keys control")
    facts.append(f"{len(seen.moves)} transfer(s) made by the strategy program, read from the simulation's inner instructions")
    return tuple(facts)


def _destinations(seen: _Observed, tokens: dict[str, int], decimals: Mapping[str, int]) -> list[str]:
    """Value reaches an account not the user's only by a transfer the pinned program makes to it.

    Lamports a stranger's account gains are refused unless they are tokens (wrapped SOL) the
    program moved, or the rent of an account that is the user's own."""
    diffs = []
    falling = {m for m, d in tokens.items() if d < 0}
    for address in seen.after:
        if address in seen.user:
            continue
        before, after = seen.before.get(address), seen.after.get(address)
        token_after = after.token if after else None
        if token_after is not None and token_after.mint in falling:
            gained = token_after.amount - (before.token.amount if before and before.token else 0)
            if gained > seen.moved_to(address, lamports=False):
                diffs.append(f"{amount_text(gained, token_after.mint, decimals)} to {short(address)} "
                             f"(owned by {short(token_after.owner)}), not asked for")
                continue
        gained = seen.gain(address) - seen.own_rent(address)
        if gained <= 0:
            continue
        if token_after is not None and token_after.native:
            gained -= max(seen.token_gain(address), 0) if seen.moved_to(address, lamports=False) >= seen.token_gain(address) else 0
        gained -= seen.moved_to(address, lamports=True) if seen.intent.action != "deposit" else 0
        if gained > 0:
            owner = f" (a new account owned by {short(after.owner)})" if after is not None and before is None and after.owner else ""
            diffs.append(f"{amount_text(gained, None, decimals)} to {short(address)}{owner}, not asked for")
    return diffs


def _strategy_payouts(seen: _Observed, decimals: Mapping[str, int]) -> list[str]:
    """What the strategy program pays out of its accounts goes to the user (or to the recipient
    the user named when closing); a withdrawal may pay a fee elsewhere, at most 1 % of it."""
    diffs: list[str] = []
    intent = seen.intent
    outward = [m for m in seen.moves if m.source not in seen.user and m.destination not in seen.user
               and not m.lamports and m.destination != _recipient_account(seen)]
    if not outward:
        return diffs
    received = sum(m.amount for m in seen.moves if m.destination in seen.user and not m.lamports)
    allowed = -(-received * MAX_WITHDRAW_FEE_BPS // 10_000) if intent.action == "withdraw" else 0
    if intent.action == "deposit" or sum(m.amount for m in outward) > allowed:
        mint = intent.mint
        for m in outward:
            if intent.action == "deposit" and m.source not in seen.controlled:
                continue  # the strategy's own bookkeeping between its accounts, not the user's value
            diffs.append(f"{amount_text(m.amount, mint, decimals)} of your position to {short(m.destination)}, not asked for")
    return diffs


def _recipient_account(seen: _Observed) -> str | None:
    """The token account the position's remainder may go to when closing: one the named recipient owns."""
    recipient = seen.intent.funds_recipient
    if recipient is None or seen.intent.action != "close-account":
        return None
    for address, state in seen.after.items():
        if state is not None and state.token is not None and (state.token.owner == recipient or address == recipient):
            return address
    return recipient


def _controlled(seen: _Observed, resolved: Resolved | None) -> list[str]:
    """Accounts the user's keys control that the request does not change: they must not change."""
    diffs = []
    nonce = _lifetime_nonce(resolved)
    for address, kind in sorted(seen.controlled.items()):
        before, after = seen.before.get(address), seen.after.get(address)
        if before == after or (kind == "nonce" and address == nonce and after is not None and before is not None
                               and after.lamports == before.lamports and after.owner == before.owner):
            continue
        if kind == "position":
            if after is None:
                continue  # a closed position: its lamports are followed like any other SOL
            if position_user(after) != seen.intent.wallet:
                diffs.append(f"your position {short(address)} would belong to {short(position_user(after) or '?')}")
            continue
        if kind == "delegated" and after is not None and before is not None and after.token and before.token \
                and after.token.amount >= before.token.amount and after.token == before.token:
            continue
        diffs.append(f"your {_KIND_NAMES[kind]} {short(address)} changes, not asked for")
    for address, name in ((seen.intent.wallet, "wallet"), (seen.intent.payer, "payer")):
        before, after = seen.before.get(address), seen.after.get(address)
        if before is not None and after is not None and before.owner and (after.owner != before.owner or after.size != before.size):
            what = f"assigned to program {short(after.owner)}" if after.owner != before.owner else f"given {after.size} bytes of data"
            diffs.append(f"your {name} {short(address)} would be {what}")
    return diffs


_KIND_NAMES = {"delegated": "token account (you are its delegate or close authority)", "nonce": "nonce account",
               "stake": "stake account", "mint": "mint", "position": "position", "token": "token account"}


def _lifetime_nonce(resolved: Resolved | None) -> str | None:
    """The nonce account a durable-nonce transaction advances in its first instruction."""
    if resolved is None or not resolved.instructions:
        return None
    program_index, accounts, data = resolved.instructions[0]
    if resolved.keys[program_index] == programs.SYSTEM_PROGRAM and data[:4] == b"\x04\x00\x00\x00" and accounts:
        return resolved.keys[accounts[0]]
    return None


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

    return {"address": address, "user": address in seen.user, "controlled": seen.controlled.get(address), "lamports_change": seen.gain(address),
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
             + (f" (priority {_plain(scale(priority_fee, 9))})" if priority_fee else "")]
    if rent:
        parts.append(f"rent {amount_text(rent, None, decimals)}")
    return "; ".join(parts)
