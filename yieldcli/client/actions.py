"""The actions a user may ask for, one row each: everything that differs between a deposit, a withdrawal
and a close lives in its row, and every face dispatches on rows, never on an action's name.

A row says where the service builds it (`service_path`) and which field of the service's body says
what (`fields`: the one order builder, `orders.order_for`, fills them in and reads the request back
from the same body); the kind the guard checks it as (`kind`: its expected effect and its
strategy-instruction matcher live in `yieldcli/chain/guard/kinds/`); whether it takes an amount; its
options beyond asset and amount (`options`, each one the command line's flag, the Python keyword and
the agent tool's parameter); the question's noun; what it does, for the command's help and the agent
tool's description; `--expect`'s spelling. From the rows come the command line's write commands
(`cli/commands/write.py`), `Client.prepare_action` (and `deposit`, `withdraw`, `close_account` on top
of it) and the agent server's `prepare_*` tools (`mcp/writes.py`).

Adding an action the strategy program already supports is one row here, plus its tests; a new kind
of effect also needs its module in `chain/guard/kinds/`. This module imports nothing heavy: the
command line lists the rows at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass

from yieldcli.chain.transact.outcomes import NO_ACTION
from yieldcli.errors import UsageError


@dataclass(frozen=True)
class Option:
    """An action's option beyond its asset and amount: `keyword` is the Python keyword and the agent
    tool's parameter, `--keyword-with-dashes` the flag; `field` the service's body field it sets."""

    keyword: str
    field: str
    help: str
    # "flag": off or on (off leaves it out of the body); "switch": on, off, or None for the service's
    # default (`--x/--no-x`); "address": a public key.
    form: str = "flag"
    agents: bool = True  # an agent may set it (a recipient of funds is the person's choice only)
    sol_only: bool = False  # it means something for SOL (wrapped SOL) only: set for another asset, it is refused

    @property
    def flag(self) -> str:
        return "--" + self.keyword.replace("_", "-")


@dataclass(frozen=True)
class Action:
    name: str  # as the user says it: deposit, withdraw, close-account (the command, `--expect`, the tool)
    noun: str  # as the question before signing says it: "Sign and send this withdrawal?"
    kind: str  # what the guard checks it as: a module of `chain/guard/kinds/` (deposit, withdraw, close-account)
    service_path: str  # where the service builds it ("/deposit": its /tx and /ix answers)
    # Which field of the service's request body says what the request must do (wallet, payer, mint,
    # amount, ...): the intent check reads the request the way the service reads it. A "position" field
    # lets the action name the fund account by its address instead of wallet, strategy and mint.
    fields: tuple[tuple[str, str], ...]
    help: str  # what it does, in a sentence: the command's help begins with it
    proposes: str  # the agent tool's description (`yield mcp`'s `prepare_*`): what it proposes
    amount: bool = True  # takes an amount (or all); else acts on the whole position
    agent_all: bool = False  # an agent may ask for everything (`all`), not only an amount
    options: tuple[Option, ...] = ()
    asks_always: bool = False  # asks on a terminal, and needs --yes off one, even to sign only
    # How much more than its proposal a fresh transaction may move before an agent must propose
    # again, in hundredths: a withdrawal's fee moves with the yield accrued in between.
    drift_percent: int = 0

    @property
    def field(self) -> dict[str, str]:
        return dict(self.fields)

    @property
    def by_position(self) -> bool:
        """The fund account may be named by its address (`--account`)."""
        return "position" in self.field

    @property
    def expect_spelling(self) -> str:
        """How `yield tx sign/send --expect` names it."""
        return f"{self.name}:ASSET:AMOUNT" if self.amount else f"{self.name}:ASSET"

    @property
    def tool(self) -> str:
        """The agent server's tool that proposes it."""
        return "prepare_" + self.name.replace("-", "_")

    @property
    def method(self) -> str:
        """The name it goes by in Python (`close_account`)."""
        return self.name.replace("-", "_")


_MOVE_FIELDS = (("wallet", "user_key"), ("payer", "payer_key"), ("mint", "base_asset"), ("amount", "amount"))

DEPOSIT = Action(
    "deposit",
    "deposit",
    "deposit",
    "/deposit",
    _MOVE_FIELDS,
    "Deposit into a strategy.",
    "Propose a deposit of `amount` token units of `asset` into the strategy.",
)
WITHDRAW = Action(
    "withdraw",
    "withdrawal",
    "withdraw",
    "/withdraw",
    (*_MOVE_FIELDS, ("exclude_fees", "exclude_fees"), ("unwrap", "unwrap_wsol_ata")),
    "Withdraw from a strategy.",
    "Propose a withdrawal of `amount` token units of `asset` (or all=true for everything). exclude_fees: "
    "receive the full amount; unwrap_wsol: SOL arrives unwrapped.",
    agent_all=True,
    options=(
        Option("exclude_fees", "exclude_fees", "Receive the full amount; fees come from the yield."),
        Option(
            "create_wsol_ata",
            "create_wsol_ata",
            "For SOL: create the wrapped-SOL account if missing (service default: yes).",
            form="switch",
            agents=False,
            sol_only=True,
        ),
        Option(
            "unwrap_wsol",
            "unwrap_wsol_ata",
            "For SOL: unwrap to native SOL at the end (service default: no).",
            form="switch",
            sol_only=True,
        ),
        Option(
            "detect_wsol",
            "detect_wsol_ata",
            "For SOL: let the service choose the two flags above.",
            agents=False,
            sol_only=True,
        ),
    ),
    drift_percent=1,
)
CLOSE = Action(
    "close-account",
    "account closing",
    "close-account",
    "/close-user-account",
    (
        ("wallet", "user_pubkey"),
        ("payer", "payer"),
        ("mint", "mint"),
        ("funds_recipient", "funds_recipient"),
        ("position", "user_account"),
    ),
    "Close a user fund account: what it holds and its rent come back to you.",
    "Propose closing the wallet's account for `asset` in the strategy (its rent comes back). "
    "Always needs the person's approval.",
    amount=False,
    options=(
        Option(
            "recipient",
            "funds_recipient",
            "Who receives the account's rent (default: the wallet).",
            form="address",
            agents=False,
        ),
    ),
    asks_always=True,
    drift_percent=1,
)

ACTIONS: dict[str, Action] = {a.name: a for a in (DEPOSIT, WITHDRAW, CLOSE)}
TRANSACTION = NO_ACTION  # a transaction handed over with no action stated: it may cost only the fee


def action_named(name: str) -> Action:
    """The row called `name`; an unknown action is refused with the known ones listed."""
    found = ACTIONS.get(name)
    if found is None:
        raise UsageError(f"unknown action {name!r}: expected one of {', '.join(ACTIONS)}", kind="usage.action.unknown")
    return found
