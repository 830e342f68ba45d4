"""The pipeline's vocabulary: what was asked (`UserRequest`), how far to go (`TransactOptions`), what
the caller says and sees (`Hooks`), a transaction to review and one `Prepared` to sign.

Shared by `engine` (the steps), `checks` and `broadcast`, which import it and not one
another in a circle.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from yieldcli.chain.transact.outcomes import NO_ACTION
from yieldcli.errors import UsageError
from yieldcli.solana.cluster import COMMITMENTS, DEFAULT_COMMITMENT, DEFAULT_CONFIRM_TIMEOUT

if TYPE_CHECKING:
    from solders.address_lookup_table_account import AddressLookupTableAccount
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.fees.compute_budget import FeeSummary
    from yieldcli.chain.guard.intent import Check
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.outcomes import Result
    from yieldcli.chain.tx.review import Review


@dataclass
class UserRequest:
    """What the user asked for, and for whom: drives the signers check and the intent check."""

    action: str  # the row's name (`client/actions.py`), or "transaction" (any transaction: fees only)
    expected_payer: str | None = None
    named_signers: set[str] = field(default_factory=set)  # signers expected to sign, here or elsewhere
    wallet: str | None = None
    strategy_id: str | None = None
    mint: str | None = None
    amount: int | None = None  # base units; None with a mint means everything
    exclude_fees: bool = False
    unwrap: bool = False
    funds_recipient: str | None = None  # close-account: who the user named to receive the position's remainder
    nonce: str | None = None  # the durable-nonce account the user asked the transaction to be built on
    token_account: str | None = None  # the user's token account named for the deposit or the payout
    position: str | None = None  # close-account: the fund account (position) the user named by its address
    trust: bool = True  # destinations the user trusts apply (never to a transaction handed over)
    checked_as: str = NO_ACTION  # the guard's kind for it (`chain/guard/kinds/`), from the action's row
    noun: str = "transaction"  # how the question before signing names it: "Sign and send this withdrawal?"
    # The decimals the amount was converted from token units with (None: given in base units, or everything):
    # the guard's own read of the mint must say the same, or the amount meant is not the amount asked.
    decimals: int | None = None
    # The symbol the user named a listed token by (`--asset SDX`): the guard's own read of the mint's
    # metadata must name it so, or the symbol was resolved from an answer this check does not see.
    named_as: str | None = None

    @property
    def states_an_action(self) -> bool:
        """An action of the rows was asked (not a transaction handed over with none stated)."""
        return self.action != NO_ACTION


@dataclass
class TransactionToReview:
    """A transaction as it was obtained (from the service, compiled from its instructions, or given)."""

    transaction: VersionedTransaction
    last_valid_block_height: int | None = None
    lookup_tables: tuple[AddressLookupTableAccount, ...] = ()
    service_answer: Any = None  # the service's body as it came, when the transaction was built from it
    nonce: str | None = None  # the durable-nonce account we built it on, at the user's request


Obtain = Callable[[Any], Awaitable[TransactionToReview]]


@dataclass
class TransactOptions:
    """How far to go and under which limits."""

    sign: bool = False
    send: bool = False
    wait: bool = True
    simulate: bool = True
    commitment: str = DEFAULT_COMMITMENT
    timeout: float = DEFAULT_CONFIRM_TIMEOUT
    again: bool = False  # send although an earlier transaction for this wallet landed since
    unsafe_allow_mismatch: bool = False  # sign what does not match the request (after `allowed_mismatch` and `confirm`)
    max_sol_cost: int | None = None  # lamports of fee and rent allowed; None: the intent check's default
    priority_fee: int | str | None = None  # "auto" or micro-lamports per compute unit
    priority_fee_insists: bool = True  # False for a default: a transaction already signed keeps its fee
    priority_fee_source: str = "request"  # where a default came from, for the log
    max_fee: int | None = None  # lamports of base plus priority fee allowed
    expected_cluster: str | None = None  # "mainnet-beta" for the public service; None: any, blockhash known
    strategy_program: str | None = None  # the strategy's program off mainnet (chain/pinned.py decides which is trusted)
    trust_file: str | None = None  # the user's trusted destinations (`yieldcli.trust`); None: none trusted
    # Look for this exact transaction having landed before simulating, though only signing now: a
    # library caller prepares once and may send later, as `yield tx send` would.
    landed_first: bool = False

    def validate(self) -> None:
        if self.commitment not in COMMITMENTS:
            raise UsageError(
                f"invalid commitment {self.commitment!r}",
                hint="use processed, confirmed or finalized",
                kind="usage.commitment",
            )
        if self.timeout <= 0:
            raise UsageError(
                f"invalid timeout {self.timeout}: expected a positive number of seconds", kind="usage.timeout"
            )


def _nothing(*_: Any) -> None:
    return None


def _logged_warning(message: str) -> None:
    """A warning no caller asked to hear goes to the `yieldcli` logger (Python's last-resort handler
    prints it on stderr when logging is not set up): never dropped."""
    import logging

    logging.getLogger("yieldcli").warning(message)


def _logged_detail(message: str) -> None:
    import logging

    logging.getLogger("yieldcli").debug(message)


@dataclass
class Hooks:
    """What the caller says and sees on the way. Only `confirm` guards anything: without it nothing is signed."""

    # (prompt text, the prepared transaction) -> sign? Only True signs; an awaitable is awaited (consent.py).
    confirm: Callable[[str, Prepared], bool | Awaitable[bool]] | None = None
    # An earlier one landed: send another? None: refused. Answered as `confirm` is.
    confirm_again: Callable[[str], bool | Awaitable[bool]] | None = None
    on_review: Callable[[Prepared], None] = _nothing  # reviewed and checked, before any refusal or question
    warn: Callable[[str], None] = _logged_warning
    log: Callable[[str], None] = _logged_detail
    progress: Callable[[str, str | None], None] = _nothing  # ("waiting", the commitment seen so far)
    allowed_mismatch: Callable[[list[str]], None] = _nothing  # the differences signed anyway (unsafe_allow_mismatch)
    # None: a settled signature leaves the journal at once. Else it is handed what drops it, to run
    # once the outcome has reached the person: a run killed before that leaves the record for the
    # next send to settle and report, so a send is never both landed and untold.
    when_shown: Callable[[Callable[[], None]], None] | None = None
    while_sending: Callable[[], AbstractContextManager[Any]] = (
        contextlib.nullcontext
    )  # e.g. signals that cancel the wait


@dataclass
class Prepared:
    """Reviewed, simulated and checked; nothing signed yet."""

    request: UserRequest
    options: TransactOptions
    rpc_url: str
    transaction: VersionedTransaction
    review: Review
    fees: FeeSummary | None
    effect: Check | None  # the intent check's verdict; None when it could not run
    result: Result  # review, fee, simulation and effect as JSON shows them
    signers: list[Signer]
    last_valid_block_height: int | None
    lookup_tables: tuple[AddressLookupTableAccount, ...] = ()

    @property
    def asks_to_sign(self) -> bool:
        return self.options.sign or self.options.send

    @property
    def nothing_to_sign(self) -> bool:
        """Every signature the transaction needs is there and verifies: it is sent as it is, and no
        intent need be stated (nothing of the user's is signed; a stated one still holds)."""
        return bool(self.result.get("nothing_to_sign"))  # decided once, by `transact.prepare`
