"""The actions a user may ask for, each a value with its own rows: the strategy instruction it needs, the
System/Token/ATA instructions it may use the user's authority for, its exact expected effect, and
where the service is asked for it (its path, and which body field says what the guard then checks).
The pipeline's vocabulary (`transact.types.ACTIONS`, the question's nouns), the order builder
(`client/orders.py`) and the agent server's policy read these rows; none keeps its own list.

Everything not in an action's effect rows must be unchanged. The manual's table "What `yield` checks
before it signs" (docs/manual/checks.md) is `effect_table()`; a test keeps the two the same.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Action:
    name: str  # as the user says it: deposit, withdraw, close-account
    noun: str  # as the question before signing says it: "Sign and send this withdrawal?"
    call: str  # the one strategy-program instruction it needs
    needed: frozenset[str]  # the System/Token/ATA rules it may use the user's authority for (guard/instructions.py)
    effect: tuple[tuple[str, str], ...]  # (what, its exact change): everything else is unchanged
    service_path: str = ""  # where the service builds it ("/deposit": its /tx and /ix answers)
    # Which field of the service's request body says what the request must do (wallet, payer, mint,
    # amount, ...): the intent check reads the request the way the service reads it.
    fields: tuple[tuple[str, str], ...] = ()
    like: str = ""  # an action that is another under its own name (a "top-up" that is a deposit) is checked as it

    @property
    def kind(self) -> str:
        """What the guard checks it as: its own name, or the action it is like."""
        return self.like or self.name


DEPOSIT = Action(
    "deposit",
    "deposit",
    "deposit",
    frozenset({"ata.create.own", "system.transfer.own", "token.sync_native.own"}),
    (
        ("your token account named as the source", "−X"),
        ("your position (S, M), as the program accounts it", "+X (opened at 0 if new)"),
        ("your SOL (wallet, token accounts and positions together)", "−fee (−X more for SOL)"),
        ("fee + rent of accounts you then own", "at most the cost cap"),
    ),
    "/deposit",
    (("wallet", "user_key"), ("payer", "payer_key"), ("mint", "base_asset"), ("amount", "amount")),
)
WITHDRAW = Action(
    "withdraw",
    "withdrawal",
    "withdraw",
    frozenset({"ata.create.own", "token.close.own_wsol"}),
    (
        ("your position (S, M)", "−gross: X, or X + fee(X) when fees are excluded, or all of it"),
        ("the token account you named (default: yours)", "+net: gross − fee(gross), or X when fees are excluded"),
        ("your SOL", "−fee (+net more for SOL)"),
    ),
    "/withdraw",
    (
        ("wallet", "user_key"),
        ("payer", "payer_key"),
        ("mint", "base_asset"),
        ("amount", "amount"),
        ("exclude_fees", "exclude_fees"),
        ("unwrap", "unwrap_wsol_ata"),
    ),
)
CLOSE = Action(
    "close-account",
    "account closing",
    "close",
    frozenset({"ata.create.own", "ata.create.recipient"}),
    (
        ("your position (S, M)", "closed"),
        ("your token account, or the recipient's you named", "+what the position held"),
        ("your SOL", "−fee (the position's rent comes back to your wallet)"),
        ("the recipient's new token account, when you named one", "its rent, within the cost cap"),
    ),
    "/close-user-account",
    (("wallet", "user_pubkey"), ("payer", "payer"), ("mint", "mint"), ("funds_recipient", "funds_recipient")),
)
TRANSACTION = Action(
    "transaction",
    "transaction",
    "",
    frozenset(),
    (("your SOL", "−fee, when you pay it"),),
)

ACTIONS: dict[str, Action] = {a.name: a for a in (DEPOSIT, WITHDRAW, CLOSE)}
ANY = {**ACTIONS, TRANSACTION.name: TRANSACTION}


def action(name: str) -> Action:
    return ANY.get(name, TRANSACTION)


def effect_table() -> str:
    """The manual's table of expected effects (docs/manual/checks.md), one row per change an action may make."""
    rows = ["| action | what | its exact change |", "|---|---|---|"]
    for a in ANY.values():
        labels = {"transaction": "`tx sign/send` without `--expect`", "close-account": "`close-account` of M in S"}
        label = labels.get(a.name, f"`{a.name}` X of M in S")
        rows += [f"| {label} | {what} | {change} |" for what, change in a.effect]
    return "\n".join(rows)
