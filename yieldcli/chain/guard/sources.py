"""The accounts an action may use and open: the source (or destination) the user meant, no other of the
user's accounts of that asset touched, rent only where the action pays into it, and every opening one
that nobody can make fail. Pure.

- The asked account is the one the user named (`--token-account`), else the associated account of the
  mint, derived with the mint's own token program; a close to a recipient pays the recipient's account.
  Every other account of the user's of that asset stays exactly as it was (neither spent, nor filled,
  nor closed): wrapped SOL is wrapped into and unwrapped from the asked account only.
- A token account is opened only when the action pays into it: the asked account of a withdrawal or a
  close when it receives something, or a SOL deposit's wrapped-SOL account it wraps into. Any other
  opening is rent nobody needed (a recipient's account that receives nothing is a gift that never comes
  back).
- An associated account is opened with `CreateIdempotent` only: a plain `Create` fails when anyone opens
  the account first, and the user pays the fee of a transaction a front-runner made fail.
"""

from __future__ import annotations

from yieldcli.chain.guard.calls import Calls, associated_account
from yieldcli.chain.guard.holdings import Holdings
from yieldcli.chain.guard.kinds import kind_of
from yieldcli.chain.guard.message import Resolved
from yieldcli.chain.guard.text import amount_text, short, symbol
from yieldcli.solana import programs
from yieldcli.tokens import WSOL_MINT


def account_rules(holdings: Holdings, calls: Calls, resolved: Resolved, token_program: str) -> list[str]:
    """Every way the transaction uses or opens an account the action does not need, one line each."""
    problems = _plain_creates(resolved) + _loaded_of_yours(holdings, resolved)
    asked = asked_account(holdings, calls, token_program)
    problems += _other_accounts(holdings, asked)
    problems += _opened(holdings, calls, asked)
    return problems


def asked_account(holdings: Holdings, calls: Calls, token_program: str) -> str | None:
    """The token account the action moves the asset out of or into: None for a transaction with no action."""
    intent = holdings.intent
    if intent.mint is None or not kind_of(intent).asset:
        return None
    if calls.call is not None and calls.call.token_account:
        return calls.call.token_account  # matched to the request in `calls.py` (`kinds/`: the asked one)
    return intent.token_account or associated_account(intent.wallet, intent.mint, token_program)


def _loaded_of_yours(holdings: Holdings, resolved: Resolved) -> list[str]:
    """An account of the user's (or one the user named) that the message loads from a lookup table: the
    table's contents are the RPC's word, so the address the signature really covers may be another.
    A strategy's tables hold its vaults, mints and programs; the user's own accounts are named in the message."""
    named = _named_by_you(holdings, resolved)
    return [
        f"{short(address)} ({'yours' if address in holdings.owned else 'named by you'}) is loaded from a lookup "
        "table: only the RPC vouches for a table's contents, so an account of yours, or one you named or "
        "trusted, must be in the message itself"
        for address in dict.fromkeys(resolved.loaded)
        if address in holdings.owned or address in named
    ]


def _named_by_you(holdings: Holdings, resolved: Resolved) -> set[str]:
    """Accounts the user named or trusted, whose being paid the guard accepts: the recipient and its token
    accounts of the asset (either token program), a named token account, every trusted destination."""
    intent = holdings.intent
    named = {a for a in (intent.funds_recipient, intent.token_account) if a} | {d for d, _ in intent.trusted}
    if intent.funds_recipient:
        for mint in {m for m in (intent.mint, WSOL_MINT) if m}:
            for program in (programs.TOKEN_PROGRAM, programs.TOKEN_2022_PROGRAM):
                named.add(associated_account(intent.funds_recipient, mint, program))
    return named


def _plain_creates(resolved: Resolved) -> list[str]:
    found = []
    for index, (_, _, data) in enumerate(resolved.instructions):
        if resolved.program(index) == programs.ASSOCIATED_TOKEN_PROGRAM and data[:1] in (b"", b"\x00"):
            found.append(
                f"instruction {index + 1}: ATA Create, not CreateIdempotent: anyone who opens that account "
                "first makes the transaction fail, and you pay its fee"
            )
    return found


def _other_accounts(holdings: Holdings, asked: str | None) -> list[str]:
    """A token account of the user's of the asset moved that is not the asked one stays as it was (also
    where the program's layout is not known and only the mint's total is checked)."""
    mint = holdings.intent.mint
    if mint is None or asked is None:
        return []
    found = []
    for address in sorted(holdings.tokens):
        if address == asked or holdings.mint_of(address) != mint:
            continue
        before, after = holdings.held(address, holdings.before), holdings.held(address, holdings.after)
        if before == after and holdings.gain(address) == 0:
            continue
        if after is None:
            what = "is closed"
        elif before is None:
            what = "is opened"
        else:
            what = f"changes by {amount_text(after.amount - before.amount, mint, {})}"
        name = "wrapped-SOL" if mint == WSOL_MINT else symbol(mint)
        found.append(f"your other {name} account {short(address)} {what}: only {short(asked)} is the one asked")
    return found


def _opened(holdings: Holdings, calls: Calls, asked: str | None) -> list[str]:
    """Token accounts the transaction opens: only the one the action pays into (or wraps into)."""
    intent = holdings.intent
    kind = kind_of(intent)
    found = []
    for address in sorted(holdings.after):
        state = holdings.after[address]
        if state is None or state.token is None:
            continue
        earlier = holdings.before.get(address)
        if earlier is not None and earlier.token is not None:
            continue
        token = state.token
        if address == asked and token.mint == intent.mint:
            if kind.pays_out and token.amount > 0:
                continue  # the destination of a withdrawal or a close, paid into
            if not kind.pays_out and intent.mint == WSOL_MINT:
                continue  # a SOL deposit's wrapped-SOL account, wrapped into
        whose = "your" if token.owner == intent.wallet else f"{short(token.owner)}'s"
        paid = "" if token.amount else ", which receives nothing"
        found.append(
            f"opens {whose} token account {short(address)} ({amount_text(state.lamports, None, {})} of rent)"
            f"{paid}: the action does not pay into it"
        )
    return found
