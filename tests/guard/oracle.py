"""What was asked against what really happened: the fuzzer's oracle.

`differences(ask, wallet, before, after, fee, cap)` compares the user's holdings (tests/guard/holdings.py)
in the whole chain before and after a transaction ran with the effect the request asks for, written
here from the issue's tables and the strategy program's README (never the guard's computation):

- deposit X of M to S: the user's associated token account of M gives X, no other account of the
  user's (deposit all: everything it holds; SOL: native SOL is wrapped into it first, and all of it
  leaves at most the cost cap in the wallet); the position
  (S, M) gains X in `deposited` and `balance` (opened by the deposit when it did not exist).
- withdraw X from (S, M): fee = ceil(gross x 10 / 10000); mode 0 gross X, the user gets X - fee;
  exclude fees: the user gets X, gross X + fee; all: gross = the balance. The position's balance falls
  by the gross and `deposited` becomes min(deposited, balance); the user's account of M gets the net
  (opened if needed); SOL with unwrap: that account is closed into the wallet.
- close (S, M): the position is gone (its rent back to the user); what it held goes to the user's
  account of M, or to the named recipient (a token account of M, or a wallet's associated account,
  opened at the user's cost, and only when something is paid into it).
- Fee: the user pays for the message's signatures and at most 0.0001 SOL more (the priority fee
  accepted when the user set none): a precompile's signatures and any other charge count in it.
- SOL: the holdings' lamports together change by exactly minus the fee the user paid (plus the SOL
  moved for a SOL deposit or payout, minus the rent of a recipient's account opened for a close);
  fee plus the rent locked in accounts the user then owns stays within the cost cap.
- Every other account of the holdings is unchanged, field by field; none appears or goes.
- The transaction lives as asked: with a recent blockhash (no request here asks for a durable nonce).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from solders.account import Account
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from tests.guard.holdings import (
    SYSTEM,
    Holding,
    Position,
    Token,
    holding,
    holdings,
    position_of,
    position_text,
    strategy_key,
    token_of,
    token_text,
)
from tests.guard.world import WSOL, ata, position_address

FEE_BPS, BPS = 10, 10_000
LAMPORTS_PER_SIGNATURE = 5_000
UNASKED_FEE = 100_000  # 0.0001 SOL: what the user accepts beyond the signatures' fee without asking
ALL_SOL_LEFT = 2  # a SOL deposit of everything leaves at most this many cost caps of lamports in the wallet


@dataclass(frozen=True)
class Ask:
    """What the user asked, as the request states it."""

    action: str  # deposit, withdraw, close-account
    strategy_id: str
    mint: Pubkey
    amount: int | None  # None: everything
    exclude_fees: bool = False
    unwrap: bool = False
    recipient: Pubkey | None = None  # close-account: who gets what the position holds


def withdrawal_fee(gross: int) -> int:
    return -(-gross * FEE_BPS // BPS)


Check = Callable[[Holding | None, Holding | None], str | None]


@dataclass
class Expected:
    accounts: dict[Pubkey, Check]  # the accounts the action changes, and how
    sol: int  # lamports the holdings gain besides the fee (negative: lose)
    foreign: dict[Pubkey, Check]  # accounts outside the holdings the action changes (a named recipient's)
    lost_rent: Callable[[dict[Pubkey, Account]], int]  # rent of a recipient's account the user opens


def _token_change(mint: Pubkey, owner: Pubkey, delta: int, *, may_open: bool) -> Check:
    """A token account of `mint` whose amount moves by `delta`, nothing else about it changing."""

    def check(b: Holding | None, a: Holding | None) -> str | None:
        if a is None or a.token is None:
            return "is gone or no longer a token account"
        if b is None or b.token is None:
            if not may_open:
                return "appeared"
            want = Token(mint, owner, delta, None, 1, a.token.native, 0, None)
            return None if a.token == want else f"opened as {token_text(a.token)}; expected {token_text(want)}"
        want = replace(b.token, amount=b.token.amount + delta)
        if a.token != want:
            return f"{token_text(b.token)} -> {token_text(a.token)}; expected {token_text(want)}"
        if a.token.native is not None and a.lamports != a.token.native + a.token.amount:
            return f"wrapped SOL: {a.lamports} lamports for {a.token.amount} wrapped and {a.token.native} rent"
        if b.token.native is None and a.lamports != b.lamports:
            return f"lamports {b.lamports} -> {a.lamports}"
        return None

    return check


def _position_change(user: Pubkey, strategy_id: str, mint: Pubkey, new: Callable[[int, int], tuple[int, int]]) -> Check:
    def check(b: Holding | None, a: Holding | None) -> str | None:
        held = b.position if b is not None else None
        deposited, balance = (held.deposited, held.balance) if held else (0, 0)
        want = Position(user, strategy_key(strategy_id), mint, *new(deposited, balance))
        if a is None or a.position != want:
            return (
                f"{position_text(held)} -> {position_text(a.position if a else None)}; expected {position_text(want)}"
            )
        if b is not None and a.lamports != b.lamports:
            return f"lamports {b.lamports} -> {a.lamports}"
        return None

    return check


def _gone(b: Holding | None, a: Holding | None) -> str | None:
    return None if a is None else f"should be closed, still holds {a}"


def expected(ask: Ask, wallet: Pubkey, before: dict[Pubkey, Account], after: dict[Pubkey, Account]) -> Expected:
    position = position_address(wallet, ask.strategy_id, ask.mint)
    own = ata(wallet, ask.mint)
    held_before = position_of(before[position]) if position in before else None
    sol = ask.mint == WSOL
    if ask.action == "deposit":
        amount = ask.amount
        if amount is None and not sol:
            token = token_of(before[own]) if own in before else None
            amount = token.amount if token else 0
        if amount is None:  # all the SOL: what the position took, checked against what is left below
            held_after = position_of(after[position]) if position in after else None
            amount = (held_after.balance if held_after else 0) - (held_before.balance if held_before else 0)
        x = amount
        source_before = token_of(before[own]).amount if own in before and token_of(before[own]) else 0
        change = -x if not sol else max(source_before - x, 0) - source_before
        accounts = {
            own: _token_change(ask.mint, wallet, change, may_open=sol),
            position: _position_change(wallet, ask.strategy_id, ask.mint, lambda d, b: (d + x, b + x)),
        }
        return Expected(accounts, -x if sol else 0, {}, lambda _: 0)
    if ask.action == "withdraw":
        balance = held_before.balance if held_before else 0
        if ask.amount is None:
            gross, net = balance, balance - withdrawal_fee(balance)
        elif ask.exclude_fees:
            gross, net = ask.amount + withdrawal_fee(ask.amount), ask.amount
        else:
            gross, net = ask.amount, ask.amount - withdrawal_fee(ask.amount)
        accounts = {
            position: _position_change(wallet, ask.strategy_id, ask.mint, lambda d, b: (min(d, b - gross), b - gross)),
            own: _gone if sol and ask.unwrap else _token_change(ask.mint, wallet, net, may_open=True),
        }
        return Expected(accounts, net if sol else 0, {}, lambda _: 0)
    remainder = held_before.balance if held_before else 0
    accounts = {position: _gone}
    foreign: dict[Pubkey, Check] = {}
    target = own
    if ask.recipient is not None and ask.recipient != wallet:
        named = before.get(ask.recipient)
        target = ask.recipient if named is not None and token_of(named) is not None else ata(ask.recipient, ask.mint)
    if remainder:
        owner = token_of(before[target]).owner if target in before else (ask.recipient or wallet)
        (accounts if target == own else foreign)[target] = _token_change(ask.mint, owner, remainder, may_open=True)
    elif target != own:
        # Nothing to pay: the recipient's account is not opened (its rent a gift that never comes back).
        foreign[target] = lambda b, a: "opened, though the close pays nothing into it" if a != b else None

    def lost_rent(after: dict[Pubkey, Account]) -> int:
        opened = target != own and target not in before and target in after
        return after[target].lamports if opened else 0

    return Expected(accounts, remainder if sol and target == own else 0, foreign, lost_rent)


def differences(
    ask: Ask,
    wallet: Pubkey,
    before: dict[Pubkey, Account],
    after: dict[Pubkey, Account],
    fee_paid: int,
    cap: int,
    signatures: int | None = None,
) -> list[str]:
    """Every way the transaction's effect on the user differs from what was asked (empty: none)."""
    plan = expected(ask, wallet, before, after)
    was, now = holdings(before, wallet), holdings(after, wallet)
    problems = []
    for address in sorted({*was, *now, *plan.accounts}, key=str):
        b, a = was.get(address), now.get(address)
        if address == wallet:
            if b is None or a is None or (b.owner, b.data_hash) != (a.owner, a.data_hash):
                problems.append(f"the wallet {address}: {b} -> {a}")
            continue
        check = plan.accounts.get(address)
        problem = check(b, a) if check is not None else (None if a == b else _change_text(b, a))
        if problem:
            problems.append(f"{b.kind() if b else a.kind() if a else 'account'} {address}: {problem}")
    for address, check in plan.foreign.items():
        b, a = before.get(address), after.get(address)
        problem = check(holding(b) if b else None, holding(a) if a else None)
        if problem:
            problems.append(f"the recipient's account {address}: {problem}")
    lost = plan.lost_rent(after)
    gained = sum(h.lamports for h in now.values()) - sum(h.lamports for h in was.values())
    wanted = plan.sol - fee_paid - lost
    if gained != wanted:
        problems.append(f"SOL of the holdings: {gained:+} lamports, expected {wanted:+} (fee {fee_paid})")
    if signatures is not None and fee_paid > signatures * LAMPORTS_PER_SIGNATURE + UNASKED_FEE:
        problems.append(
            f"fee: {fee_paid} lamports paid for {signatures} signature(s), more than their "
            f"{signatures * LAMPORTS_PER_SIGNATURE} and the {UNASKED_FEE} accepted unasked"
        )
    locked = sum(h.lamports for address, h in now.items() if address not in was)
    if fee_paid + locked + lost > cap:
        problems.append(
            f"cost: fee {fee_paid} + {locked + lost} lamports put in accounts the user did not hold before,"
            f" over the cap of {cap}"
        )
    everything = ask.action == "deposit" and ask.amount is None and ask.mint == WSOL and wallet in after
    if everything and after[wallet].lamports > ALL_SOL_LEFT * cap:
        problems.append(f"deposit of all SOL left {after[wallet].lamports} lamports in the wallet")
    return problems


def unasked_lifetime(tx: VersionedTransaction) -> str | None:
    """No request here asks for a durable nonce: a signed transaction that advances one as its first
    instruction lives as long as that nonce, and whoever holds it decides when it lands."""
    message = tx.message
    if not message.instructions:
        return None
    first = message.instructions[0]
    keys = message.account_keys
    if first.program_id_index < len(keys) and keys[first.program_id_index] == SYSTEM:
        data = bytes(first.data)
        if data[:4] == (4).to_bytes(4, "little") and first.accounts:
            nonce = keys[first.accounts[0]] if first.accounts[0] < len(keys) else "an account of a lookup table"
            return f"lifetime: a durable nonce nobody asked for ({nonce}): it may land at any later time"
    return None


def _change_text(b: Holding | None, a: Holding | None) -> str:
    if b is None:
        return f"appeared: {a}"
    if a is None:
        return f"gone (held {b.lamports} lamports)"
    if b.token and a.token:
        return f"{token_text(b.token)} -> {token_text(a.token)}" + (
            f"; lamports {b.lamports} -> {a.lamports}" if a.lamports != b.lamports else ""
        )
    return f"{b} -> {a}"
