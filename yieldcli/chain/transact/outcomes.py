"""How a transaction ended: one typed outcome per end, each with the result as `-o json` shows it.

Failed, Expired and Pending are outcomes, not exceptions: the transaction was sent and something is
known about it. `error()` gives the exception a caller that wants one raises (the command line
does, for its exit codes). Refusals before any signature are exceptions (`Refused`,
`SimulationFailed`, `Declined`), with the result so far in `report`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from yieldcli.errors import (
    Declined,
    ExitCode,
    NetworkError,
    Refused,
    SimulationFailed,
    TransactionExpired,
    TransactionFailed,
    TransactionPending,
    YieldError,
)
from yieldcli.solana.transaction_errors import describe_error

Result = dict[str, Any]
# How the review says the RPC was out of reach (the simulation's `skipped`); a review-only run then
# exits as a network error.
RPC_UNREACHABLE = "the RPC could not be reached"

# What a transaction handed over with no action stated is asked to do: cost the fee, nothing else.
NO_ACTION = "transaction"


@dataclass
class Outcome:
    """Where the transaction is; `result` is the whole record (review, fee, simulation, effect, status)."""

    result: Result

    @property
    def status(self) -> str:
        return str(self.result.get("status"))

    def error(self) -> YieldError | None:
        """The exception for an end that is not a success; None otherwise."""
        return None


@dataclass
class Unsigned(Outcome):
    """Reviewed only: nothing was signed (the request did not ask for a signature)."""

    transaction: str = ""  # base64

    def error(self) -> YieldError | None:
        """A review is a dry run that scripts gate on: a success only when the simulation ran and the
        effect is what was asked; otherwise what the check found, as a send would have ended."""
        simulation, effect = self.result.get("simulation"), self.result.get("effect")
        if simulation is None:
            return Refused(
                "reviewed only, and not checked: the simulation was turned off", kind="refused.unchecked.review"
            )
        skipped = simulation.get("skipped")
        if skipped:
            if str(skipped).startswith(RPC_UNREACHABLE):
                return NetworkError(f"reviewed only, and not checked: {skipped}", kind="network.rpc.unreachable")
            return Refused(f"reviewed only, and not checked: {skipped}", kind="refused.unchecked.review")
        if not simulation.get("ok"):
            return SimulationFailed(
                f"reviewed only: the simulation failed: {simulation.get('error')}", kind="simulation.review"
            )
        if self.result.get("action") == NO_ACTION:
            return None  # a transaction looked at with no request stated: nothing to match
        if effect is None or effect.get("differences"):
            differences = "; ".join(effect.get("differences", ())) if effect else "no check"
            message = f"reviewed only: the transaction does not do what was asked: {differences}"
            if effect and effect.get("untrusted_destinations"):
                return untrusted_refusal(message, effect["untrusted_destinations"], effect["expected"], review=True)
            return Refused(message, kind="refused.mismatch.review")
        return None


@dataclass
class Signed(Outcome):
    """Signed and not sent: complete, or still waiting for other signers' signatures."""

    transaction: str = ""  # base64
    signature: str = ""
    missing_signers: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing_signers


@dataclass
class Sent(Outcome):
    """Sent, and not waited for."""

    signature: str = ""


@dataclass
class Confirmed(Outcome):
    signature: str = ""
    slot: int = 0
    commitment: str = ""  # the status reached, at least the one asked for
    already_processed: bool = False  # it had landed before: nothing new was sent


@dataclass
class Failed(Outcome):
    """Landed and failed on chain: the fee was paid, nothing else happened."""

    signature: str = ""
    slot: int = 0
    reason: str = ""
    logs: list[str] = field(default_factory=list)  # empty when the node could not give them
    err: Any = None  # the RPC's JSON form of the transaction error

    def error(self) -> YieldError:
        return with_signature(
            TransactionFailed(f"transaction {self.signature} failed on chain: {self.reason}", kind="tx.failed"),
            self.signature,
        )


@dataclass
class Expired(Outcome):
    """Its blockhash passed (or its durable nonce moved on) without it landing: nothing was spent."""

    signature: str = ""
    why: str = ""
    last_valid_block_height: int | None = None  # None for a durable-nonce transaction
    block_height: int | None = None  # the height seen past the deadline; the transaction can no longer land
    nonce_account: str | None = None  # set when the transaction's nonce moved on without it

    def error(self) -> YieldError:
        return with_signature(
            TransactionExpired(
                f"transaction {self.signature} expired: {self.why} without it landing; nothing was spent",
                kind="tx.expired",
            ),
            self.signature,
        )


@dataclass
class Pending(Outcome):
    """Sent and not known to have landed or expired: it may still land. Never "nothing was spent"."""

    signature: str = ""
    why: str = ""
    last_status: str | None = None  # the commitment seen so far, None if the cluster has not seen it
    last_error: str | None = None  # a network error from the wait's last poll, if any

    def error(self) -> YieldError:
        return with_signature(
            TransactionPending(f"transaction {self.signature}: {self.why}", kind="tx.pending"), self.signature
        )


# How a wait for a sent transaction ends (`confirm.wait_for`): the same classes the pipeline returns,
# their `result` holding what the wait learnt; the pipeline adds the rest of the record to it.
Waited = Confirmed | Failed | Expired | Pending


def confirmed(signature: str, slot: int, commitment: str) -> Confirmed:
    result = {"signature": signature, "status": "confirmed", "slot": slot, "commitment": commitment}
    return Confirmed(result, signature, slot, commitment)


def failed(signature: str, slot: int, err: Any, logs: Sequence[str] | None) -> Failed:
    """Landed and failed: `err` as the RPC gives it, `logs` None when the node could not give them."""
    reason, lines = describe_error(err), list(logs or ())
    result = {"signature": signature, "status": "failed", "slot": slot, "error": reason, "logs": lines}
    return Failed(result, signature, slot, reason, lines, err)


def expired(
    signature: str, last_valid_block_height: int | None, block_height: int | None, nonce_account: str | None = None
) -> Expired:
    """Past its deadline unseen: its block height passed, or (`nonce_account`) its durable nonce moved on."""
    if nonce_account is not None or last_valid_block_height is None:
        why = f"its durable nonce (account {nonce_account or 'unknown'}) moved on"
    else:
        why = f"its blockhash passed (block height {block_height} > {last_valid_block_height})"
    result = {
        "signature": signature,
        "status": "expired",
        "block_height": block_height,
        "last_valid_block_height": last_valid_block_height,
        "nonce_account": nonce_account,
    }
    return Expired(result, signature, why, last_valid_block_height, block_height, nonce_account)


def pending(signature: str, last_status: str | None, last_error: str | None = None) -> Pending:
    """Not proven landed when the wait ended; `last_status`: what was seen."""
    why = f"still pending after the timeout (seen: {last_status or 'not yet'})"
    result = {"signature": signature, "status": "pending", "seen": last_status}
    return Pending(result, signature, why, last_status, last_error)


class SentThenInterrupted(YieldError):
    """Interrupted (Ctrl-C, SIGTERM, a cancelled task) after the transaction was sent: it may still land."""

    exit_code = ExitCode.INTERRUPTED
    kind = "tx.interrupted"


class ConfirmationRequired(Declined):
    """Nothing is signed without a `confirm` callback that said yes."""

    kind = "declined.no_confirm"


ErrorT = TypeVar("ErrorT", bound=YieldError)


def with_signature(error: ErrorT, signature: str) -> ErrorT:
    """The signature travels with the error, so whoever reports it can say how to check it."""
    error.signature = signature
    return error


def with_report(error: ErrorT, result: Result, status: str) -> ErrorT:
    """The result so far travels with a refusal or an unknown end, so a script still sees the review."""
    result["status"] = status
    error.report = result
    return error


def untrusted_refusal(
    message: str, destinations: Sequence[str], expected: Mapping[str, Any], review: bool = False
) -> Refused:
    """A refusal whose plain transfers would pass to destinations the user trusted: it carries what
    trusting them takes (`destination`, `mint`, `strategy`), for a hint that says how."""
    hint = "nothing was signed; trust a destination only if you know it is the strategy's (yieldcli.trust)"
    error = Refused(message, hint=hint, kind="refused.mismatch.untrusted" + (".review" if review else ""))
    for name, value in (
        ("destination", destinations[0]),
        ("mint", expected.get("mint")),
        ("strategy", expected.get("strategy")),
    ):
        setattr(error, name, value)
    return error
