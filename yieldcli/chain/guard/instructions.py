"""Which instructions may use the user's authority: a verdict for each top-level instruction.

An instruction that is given the wallet or the payer as a signer, or one of the user's accounts as
writable, uses the user's authority. It must belong to an allowed program (System, SPL Token,
Token-2022, Associated Token Account, Compute Budget, Memo) and, for System, Token and ATA, be one of
the few kinds the action needs (`actions.py`), on the user's own accounts. The pinned strategy
program's instructions are matched to the request in `calls.py`; the whole effect in `effect.py`.
Pure: the message's accounts are resolved and the states read by the caller.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Protocol

from yieldcli.chain.guard.intent import Verdict
from yieldcli.chain.guard.kinds import kind_named
from yieldcli.chain.guard.message import ADVANCE_NONCE, Resolved
from yieldcli.chain.guard.text import amount_text, short
from yieldcli.chain.guard.trusted import TRUSTED_NOTE, UNTRUSTED_NOTE
from yieldcli.chain.tx.state import LAMPORTS_PER_SIGNATURE, PRECOMPILES
from yieldcli.solana import programs

MEMO_PROGRAMS = (programs.MEMO_PROGRAM, programs.MEMO_V1_PROGRAM)
SYSTEM_KINDS = {
    0: "CreateAccount",
    1: "Assign",
    2: "Transfer",
    3: "CreateAccountWithSeed",
    4: "AdvanceNonceAccount",
    5: "WithdrawNonceAccount",
    6: "InitializeNonceAccount",
    7: "AuthorizeNonceAccount",
    8: "Allocate",
    9: "AllocateWithSeed",
    10: "AssignWithSeed",
    11: "TransferWithSeed",
    12: "UpgradeNonceAccount",
}
TOKEN_KINDS = {
    0: "InitializeMint",
    1: "InitializeAccount",
    2: "InitializeMultisig",
    3: "Transfer",
    4: "Approve",
    5: "Revoke",
    6: "SetAuthority",
    7: "MintTo",
    8: "Burn",
    9: "CloseAccount",
    10: "FreezeAccount",
    11: "ThawAccount",
    12: "TransferChecked",
    13: "ApproveChecked",
    14: "MintToChecked",
    15: "BurnChecked",
    16: "InitializeAccount2",
    17: "SyncNative",
    18: "InitializeAccount3",
}
ATA_KINDS = {0: "Create", 1: "CreateIdempotent", 2: "RecoverNested"}


@dataclass(frozen=True)
class Context:
    """Who the user is and what the chain says is theirs."""

    action: str
    wallet: str
    payer: str
    pinned: str | None  # the strategy program trusted on this cluster
    nonce: str | None  # the durable-nonce account the user asked the transaction to be built on
    owned: frozenset[str]  # the wallet, the payer and every token account the wallet owns (before or after)
    controlled: frozenset[
        str
    ]  # accounts the user's keys can change: owned, plus delegated, closable, nonce, stake, mint
    wsol: frozenset[str]  # the user's wrapped-SOL accounts (an unwrap closes one, a wrap may open one)
    funds_recipient: str | None = None
    mint: str | None = None  # the mint a deposit moves, when trust can apply (the request names its strategy)
    trusted: tuple[tuple[str, str], ...] = ()  # a deposit's trusted destinations: (token account, mint)
    trust_cap: int = 0  # the most a plain transfer to a trusted destination may move: the deposit
    asset: str | None = None  # the mint the request moves: the only one whose token account it may open
    token_program: str = programs.TOKEN_PROGRAM  # the program that owns that mint, read from the chain
    other_signers: frozenset[str] = frozenset()  # keys we sign with besides the wallet and the payer
    # Known from the request and the chain before the simulation (a simulation can be lied about):
    wrap_into: str | None = None  # a SOL deposit's wrapped-SOL account, the only one SOL may be sent into
    wrap_lamports: int | None = None  # what it lacks of the deposit: exactly what is sent into it (None: unknown)
    opens: frozenset[str] = frozenset()  # the token accounts the action pays into: the only ones it may open


class MakeVerdict(Protocol):
    def __call__(self, kind: str, ok: bool, reason: str, untrusted: str | None = None) -> Verdict: ...


def verdicts(resolved: Resolved, ctx: Context, strategy: dict[int, Verdict]) -> list[Verdict]:
    """A verdict for each top-level instruction; the strategy program's come from `calls.match_calls`."""
    return [strategy.get(i) or _verdict(i, resolved, ctx) for i in range(len(resolved.instructions))]


def _verdict(index: int, r: Resolved, ctx: Context) -> Verdict:
    program_index, accounts, data = r.instructions[index]
    program = r.keys[program_index]
    keys = [r.keys[a] for a in accounts]

    def verdict(kind: str, ok: bool, reason: str, untrusted: str | None = None) -> Verdict:
        return Verdict(index, program, kind, ok, reason, untrusted)

    if program == programs.COMPUTE_BUDGET_PROGRAM:
        return verdict("Compute Budget", True, "sets the fee and compute limit")
    if program in MEMO_PROGRAMS:
        return verdict("Memo", True, "a note; moves nothing")
    if program == programs.SYSTEM_PROGRAM and data[:4] == ADVANCE_NONCE:
        return _advance_nonce(index, keys, ctx, verdict)
    if program in PRECOMPILES:
        # It moves nothing, but each signature it declares is charged as one of the message's, the same
        # one verified again as well: a fee nobody asked for. No action needs one.
        declared = data[0] if data else 0
        return verdict(
            "precompile",
            False,
            f"instruction {index + 1}: a signature-verification precompile ({PRECOMPILES[program]}) declaring "
            f"{declared} signature{'' if declared == 1 else 's'}, each charged as a signature's fee "
            f"({amount_text(declared * LAMPORTS_PER_SIGNATURE, None, {})} in all); this request needs none",
        )
    borrowed = [k for a, k in zip(accounts, keys, strict=True) if k in ctx.other_signers and r.signer[a]]
    if borrowed:
        # A nonce's authority (or any key we sign with that is neither the wallet nor the payer) signs
        # for the durable nonce asked for, and for nothing else.
        return verdict(
            "not allowed",
            False,
            f"instruction {index + 1}: it is signed by {short(borrowed[0])}, a key you sign with only "
            "to advance the durable nonce you asked for",
        )
    uses = [
        (a, k)
        for a, k in zip(accounts, keys, strict=True)  # keys is read from accounts, one for one
        if (k in (ctx.wallet, ctx.payer) and r.signer[a]) or (k in ctx.controlled and r.writable[a])
    ]
    if not uses:
        return verdict("other", True, "given none of your accounts: it cannot use your authority")
    if program == programs.SYSTEM_PROGRAM:
        return _system(index, keys, data, ctx, verdict, r)
    if program in programs.TOKEN_PROGRAMS:
        return _token(index, keys, data, ctx, verdict)
    if program == programs.ASSOCIATED_TOKEN_PROGRAM:
        return _ata(index, keys, data, ctx, verdict)
    name = programs.PROGRAM_NAMES.get(program, program)
    a, key = uses[0]
    how = (
        "your wallet as a signer"
        if key == ctx.wallet and r.signer[a]
        else ("the payer as a signer" if key == ctx.payer and r.signer[a] else f"your account {short(key)} writable")
    )
    return verdict(
        "not allowed",
        False,
        f"instruction {index + 1}: program {name} is not one this request needs, and it is given {how}",
    )


def _whose(ctx: Context, address: str) -> str:
    if address == ctx.wallet:
        return "your wallet"
    if address == ctx.payer:
        return "the payer"
    return f"your account {short(address)}" if address in ctx.controlled else short(address)


def _needed(ctx: Context, rule: str) -> bool:
    return rule in kind_named(ctx.action).needed


def _advance_nonce(index: int, keys: list[str], ctx: Context, verdict: MakeVerdict) -> Verdict:
    """A durable-nonce lifetime only when the user asked for one, and only as the first instruction."""
    kind = "System AdvanceNonceAccount"
    account = keys[0] if keys else "?"
    if index == 0 and ctx.nonce is not None and account == ctx.nonce:
        return verdict(kind, True, "advances the durable nonce you asked this transaction to be built on")
    if index == 0:
        return verdict(
            kind,
            False,
            f"instruction 1: a durable-nonce lifetime on {short(account)} that you did not ask for "
            "(it would let the transaction land at any later time)",
        )
    return verdict(kind, False, f"instruction {index + 1}: {kind} of {short(account)}, which nothing asked for")


def _system(index: int, keys: list[str], data: bytes, ctx: Context, verdict: MakeVerdict, r: Resolved) -> Verdict:
    tag = struct.unpack_from("<I", data)[0] if len(data) >= 4 else -1
    name = SYSTEM_KINDS.get(tag, f"instruction {tag}")
    kind = f"System {name}"
    if tag == 2 and len(keys) >= 2 and len(data) >= 12:
        lamports = struct.unpack_from("<Q", data, 4)[0]
        to = keys[1]
        what = f"{kind} of {amount_text(lamports, None, {})} from {_whose(ctx, keys[0])} to {short(to)}"
        if to == ctx.wrap_into and keys[0] == ctx.wallet and _needed(ctx, "system.transfer.own"):
            # Only into the wrapped-SOL account a SOL deposit takes from (lamports sent to any other token
            # account could be taken by whoever may close it), only what the deposit lacks there, and
            # wrapped (synced) after: unsynced lamports are no one's balance, and a delegate could sync them.
            problem = _wrap_problem(index, lamports, to, ctx, r)
            if problem is not None:
                return verdict(kind, False, f"instruction {index + 1}: {what}: {problem}")
            return verdict(kind, True, "wraps SOL into your own wrapped-SOL account, as the deposit needs")
        return verdict(kind, False, f"instruction {index + 1}: {what}")
    target = keys[1] if tag in (0, 3) and len(keys) > 1 else (keys[0] if keys else "?")
    return verdict(kind, False, f"instruction {index + 1}: {kind} of {_whose(ctx, target)}")


def _wrap_problem(index: int, lamports: int, to: str, ctx: Context, r: Resolved) -> str | None:
    """Why a transfer into the deposit's wrapped-SOL account is not the wrap it needs, or None."""
    sends = [
        i
        for i, (p, accounts, data) in enumerate(r.instructions)
        if r.keys[p] == programs.SYSTEM_PROGRAM and data[:4] == b"\x02\x00\x00\x00" and r.accounts(i)[1:2] == [to]
    ]
    if len(sends) > 1:
        return f"one of {len(sends)} transfers into that account; the deposit wraps once"
    if ctx.wrap_lamports is not None and lamports != ctx.wrap_lamports:
        return (
            f"the deposit needs {amount_text(ctx.wrap_lamports, None, {})} wrapped there "
            "(what it asks less what the account already holds)"
        )
    synced = any(
        r.keys[p] in programs.TOKEN_PROGRAMS and data[:1] == b"\x11" and r.accounts(i)[:1] == [to]
        for i, (p, _, data) in enumerate(r.instructions)
        if i > index
    )
    if not synced:
        return "no SyncNative of that account follows: the SOL would sit there unwrapped"
    return None


def _token(index: int, keys: list[str], data: bytes, ctx: Context, verdict: MakeVerdict) -> Verdict:
    tag = data[0] if data else -1
    name = TOKEN_KINDS.get(tag, f"instruction {tag}")
    kind = f"Token {name}"
    account = keys[0] if keys else "?"
    if tag == 17 and account in ctx.owned and _is_wsol(ctx, account) and _needed(ctx, "token.sync_native.own"):
        return verdict(kind, True, "updates your wrapped-SOL balance")
    if (
        tag == 9
        and len(keys) >= 2
        and account in ctx.owned
        and keys[1] == ctx.wallet
        and _is_wsol(ctx, account)
        and _needed(ctx, "token.close.own_wsol")
    ):
        return verdict(kind, True, "closes your wrapped-SOL account to your wallet (unwraps)")
    if tag in (3, 12):
        return _transfer(index, keys, data, ctx, verdict)
    if tag == 9 and len(keys) >= 2:
        return verdict(
            kind, False, f"instruction {index + 1}: {kind} of {_whose(ctx, account)} to {_whose(ctx, keys[1])}"
        )
    return verdict(kind, False, f"instruction {index + 1}: {kind} of {_whose(ctx, account)}")


def _transfer(index: int, keys: list[str], data: bytes, ctx: Context, verdict: MakeVerdict) -> Verdict:
    """A top-level Token Transfer (3) or TransferChecked (12): refused, but on a deposit to a
    destination the user trusts (`chain/trusted.py`); one that could be trusted names its destination."""
    tag = data[0]
    kind = f"Token {TOKEN_KINDS[tag]}"
    source = keys[0] if keys else "?"
    to = keys[2] if tag == 12 and len(keys) > 2 else (keys[1] if len(keys) > 1 else "?")
    refused = (
        f"instruction {index + 1}: {kind} from {_whose(ctx, source)} to {short(to)} "
        "(only the strategy program may move your tokens)"
    )
    if not kind_named(ctx.action).trusted_transfers or ctx.mint is None or source not in ctx.owned or len(data) < 9:
        return verdict(kind, False, refused)
    amount = struct.unpack_from("<Q", data, 1)[0]
    if tag == 12 and (len(keys) < 3 or keys[1] != ctx.mint):
        return verdict(kind, False, refused)  # another token than the deposit's: never a deposit's transfer
    decimals = {ctx.mint: data[9]} if tag == 12 and len(data) > 9 else {}
    what = f"{kind} from {_whose(ctx, source)} to {short(to)} ({amount_text(amount, ctx.mint, decimals)})"
    if amount > ctx.trust_cap:  # trusted or not: a plain transfer never moves more than the deposit
        cap = amount_text(ctx.trust_cap, ctx.mint, decimals)
        return verdict(kind, False, f"instruction {index + 1}: {what}, more than the deposit of {cap}")
    trusted_mint = dict(ctx.trusted).get(to)
    if trusted_mint is None:
        return verdict(kind, False, f"instruction {index + 1}: {what}, {UNTRUSTED_NOTE}", to)
    if trusted_mint != ctx.mint:
        return verdict(kind, False, f"instruction {index + 1}: {what}, trusted only for {short(trusted_mint)}")
    return verdict(
        kind, True, f"{TOKEN_KINDS[tag]} {amount_text(amount, ctx.mint, decimals)} to {short(to)} ({TRUSTED_NOTE})"
    )


def _is_wsol(ctx: Context, address: str) -> bool:
    return address in ctx.wsol


def _ata(index: int, keys: list[str], data: bytes, ctx: Context, verdict: MakeVerdict) -> Verdict:
    tag = data[0] if data else 0
    kind = f"ATA {ATA_KINDS.get(tag, f'instruction {tag}')}"
    if tag in (0, 1) and len(keys) >= 3 and keys[0] in (ctx.wallet, ctx.payer):
        owner = keys[2]
        mint = keys[3] if len(keys) > 3 else None
        program = keys[5] if len(keys) > 5 else None
        wrong = None
        if mint != ctx.asset:
            # An account of another mint is rent the request does not need (and a mint's freeze
            # authority could lock it for good).
            wrong = f"of a {short(mint or '?')} account, a token this request does not move"
        elif program != ctx.token_program:
            # Derived with another program, the account is not the one the mint's program keeps for
            # the owner: never the account the request pays into.
            wrong = (
                f"with the token program {short(program or '?')}, not {short(ctx.token_program)}, "
                f"the program of the mint {short(mint or '?')}"
            )
        mine = owner == ctx.wallet and _needed(ctx, "ata.create.own")
        recipients = owner == ctx.funds_recipient and _needed(ctx, "ata.create.recipient")
        if wrong is None and (mine or recipients) and keys[1] not in ctx.opens:
            # Rent only where the action pays: its destination, a SOL deposit's wrapped-SOL account.
            whose = "your" if mine else f"{short(owner)}'s"
            wrong = f"of {whose} token account {short(keys[1])}, which the action does not pay into"
        if wrong is not None:
            return verdict(kind, False, f"instruction {index + 1}: {kind} {wrong}")
        if mine:
            return verdict(kind, True, "opens your own token account, which the action pays into")
        if recipients:
            return verdict(kind, True, "opens the token account of the recipient you named, which the close pays")
        return verdict(
            kind,
            False,
            f"instruction {index + 1}: {kind} of a token account for {short(owner)}, paid by {_whose(ctx, keys[0])}",
        )
    return verdict(kind, False, f"instruction {index + 1}: {kind} with {_whose(ctx, keys[0] if keys else '?')}")
