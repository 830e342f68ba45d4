"""Proposals: a typed intent, prepared and checked through the library's front door, held until
executed once (or expired).

`prepare` asks the service for the transaction, and the library reviews, simulates and checks it
against the intent (`Client.deposit/withdraw/close_account`); the answer is the effect summary, the
fee and the policy's decision. `execute` starts again from the intent: a fresh transaction from the
service, a fresh simulation and check; then, in the callback the library calls immediately before
signing, the policy decides again on what that fresh transaction does and the amount is reserved in
the audit log, so concurrent executes (in this process or another) cannot pass the limits together.
All of it is blocking code, run on worker threads.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from yieldcli.client.actions import Action, action_named
from yieldcli.client.listed_tokens import resolve_listed
from yieldcli.errors import Refused, UsageError
from yieldcli.mcp.audit import AUDIT_HINT, AuditLog
from yieldcli.mcp.moved import moved
from yieldcli.mcp.policy import (
    UNKNOWN_AMOUNT,
    Budget,
    Decision,
    Policy,
    decide,
    kill_switch_now,
    refusal,
    refuse,
)

PROPOSAL_SECONDS = 300.0
# Errors after signing that mean nothing was sent: an earlier transaction of the wallet in flight or
# landed (the journal), or the node refused it before broadcast.
NOTHING_SENT = ("tx.pending.earlier", "refused.landed_before")


@dataclass(frozen=True)
class AgentAsk:
    action: str  # an action row's name (`yieldcli.client.actions`): deposit, withdraw, close-account, ...
    asset: str  # as given: a known symbol or a mint address
    amount: str | None = None  # token units as a decimal string; None with everything
    everything: bool = False
    options: tuple[tuple[str, Any], ...] = ()  # the row's own options the agent set, by keyword

    @property
    def row(self) -> Action:
        """Its action's row: an unknown action is refused here."""
        return action_named(self.action)

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "asset": self.asset,
            "amount": "all" if self.everything else self.amount,
            **dict(self.options),
        }


@dataclass
class Proposal:
    id: str
    intent: AgentAsk
    mint: str
    raw: int | None  # base units the transaction moves, as simulated (None: not known, refused)
    summary: str
    fee: int | None  # lamports
    decision: Decision
    expires_at: float
    state: str = "open"  # open, executing, done, declined, refused, expired
    approved: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class Book:
    """The proposals of one server, and the two steps that use the wallet."""

    def __init__(self, client: Any, policy: Policy, audit: AuditLog, clock: Callable[[], float] = time.time):
        self._client = client
        self.policy = policy
        self.audit = audit
        self._clock = clock
        self._proposals: dict[str, Proposal] = {}
        # One write at a time for the wallet: the library's journal refuses a send while an earlier one
        # for the wallet could still land, so concurrent executes wait here for their turn instead.
        self._one_at_a_time = threading.Lock()
        self._reservations: list[str] = []  # hashes of the entries this server reserved with
        self._altered: str | None = None  # what was found wrong with the log: no signing after that

    def _check_log(self) -> None:
        """The limits are counted from the log: a log that was altered (see `audit`), or that lost a
        reservation this server wrote, counts nothing reliably, so nothing is signed, now or later,
        until a person has looked (a restart, after moving the log away)."""
        if self._altered is None:
            broken = self.audit.verify(locked=True)
            present = {entry.get("hash") for entry in self.audit.entries()} if broken is None else set()
            if broken is None and any(h not in present for h in self._reservations):
                broken = "entries this server wrote are missing"
            self._altered = broken
        if self._altered is not None:
            raise Refused(
                f"the audit log {self.audit.path} was altered ({self._altered}): the limits cannot be "
                "counted; nothing was signed",
                hint=AUDIT_HINT,
                kind="refused.audit",
            )

    def budget(self, mint: str) -> Budget:
        return Budget(*self.audit.budget(mint))

    def prepare(self, intent: AgentAsk) -> Proposal:
        if intent.everything and intent.amount is not None:
            raise UsageError("give an amount or all, not both", kind="usage.amount")
        self.audit.append("prepare", intent=intent.to_dict())
        try:
            prepared = self._prepared(intent)
        except Exception as exc:  # a refusal of the guard, a failed simulation, the service's error
            self.audit.append("prepare_failed", intent=intent.to_dict(), kind=getattr(exc, "kind", type(exc).__name__))
            raise
        effect = prepared.effect
        # The mint the write itself resolved and the check read (a listed token's symbol is resolved once).
        mint = (effect.expected.get("mint") if effect else None) or resolve_listed(self._client, intent.asset)
        fee = prepared.fee.total if prepared.fee else None
        proposal_id = secrets.token_urlsafe(12)
        raw: int | None = None
        if effect is None or not effect.ok:
            why = "the check could not run" if effect is None else "; ".join(effect.differences)
            decision = Decision("refused", f"the transaction does not do what was asked: {why}")
            summary = effect.summary if effect else "not checked"
        else:
            summary, raw = (
                effect.summary,
                moved(effect, mint, fee, closing=not intent.row.amount),
            )
            decision = self._decide(intent.action, mint, raw)
        proposal = Proposal(
            proposal_id,
            intent,
            mint,
            raw,
            summary,
            fee,
            decision,
            self._clock() + PROPOSAL_SECONDS,
            "refused" if decision.verdict == "refused" else "open",
        )
        self._proposals[proposal_id] = proposal
        self.audit.append(
            "proposed",
            proposal=proposal_id,
            intent=intent.to_dict(),
            mint=mint,
            raw=None if raw is None else str(raw),
            summary=summary,
            fee=fee,
            decision=decision.to_dict(),
        )
        return proposal

    def find(self, proposal_id: str) -> Proposal:
        proposal = self._proposals.get(proposal_id)
        if proposal is None:
            raise UsageError("no such proposal: prepare the write first", kind="usage.proposal_unknown")
        return proposal

    def current_decision(self, proposal: Proposal) -> Decision:
        return self._decide(proposal.intent.action, proposal.mint, proposal.raw)

    def _decide(self, action: str, mint: str, raw: int | None) -> Decision:
        """The policy on one write now: the kill switch read afresh from the file, then the limits."""
        stop = kill_switch_now(self.policy)
        if stop is not None:
            return Decision("refused", stop, "refused.kill_switch")
        return decide(self.policy, action, mint, raw, self.budget(mint))

    def claim(self, proposal_id: str) -> Proposal:
        """The proposal, now executing: a second execute of it is refused, whatever happens to the first."""
        proposal = self.find(proposal_id)
        with proposal.lock:
            if proposal.state == "open" and self._clock() > proposal.expires_at:
                proposal.state = "expired"
            if proposal.state != "open":
                raise Refused(
                    f"proposal {proposal_id} is {proposal.state}: it cannot be executed; prepare again",
                    kind=f"refused.proposal_{proposal.state}",
                )
            proposal.state = "executing"
        return proposal

    def execute(self, proposal: Proposal, approved: bool, progress: Callable[[str, str | None], None]) -> Executed:
        """Fresh transaction, check, policy and reservation immediately before signing; then send and wait."""
        self.audit.append("execute", proposal=proposal.id, approved=approved)
        with self._one_at_a_time:
            try:
                return self._execute(proposal, approved, progress)
            finally:
                proposal.state = "done"

    def _execute(self, proposal: Proposal, approved: bool, progress: Callable[[str, str | None], None]) -> Executed:
        prepared = self._prepared(proposal.intent)
        reserved: list[bool] = []

        def confirm(_prompt: str, fresh: Any) -> bool:
            effect = fresh.effect
            if effect is None or not effect.ok:
                raise Refused(
                    "the fresh transaction does not do what was asked; nothing was signed", kind="refused.mismatch"
                )
            fee = fresh.fees.total if fresh.fees else None
            row = proposal.intent.row
            raw = moved(effect, proposal.mint, fee, closing=not row.amount)
            if raw is None or proposal.raw is None:
                raise refusal(UNKNOWN_AMOUNT)
            if raw > proposal.raw * (100 + row.drift_percent) // 100:
                raise Refused(
                    "the fresh transaction moves more than the proposal said; prepare again", kind="refused.changed"
                )
            with self.audit.locked():
                self._check_log()
                decision = self._decide(proposal.intent.action, proposal.mint, raw)
                refuse(decision)
                if decision.verdict == "approval" and not approved:
                    raise Refused(
                        "this write now needs the person's approval (the automatic limits were reached "
                        "since it was proposed); execute it again to ask",
                        kind="refused.approval_needed",
                    )
                entry = self.audit.append_locked(
                    "reserved",
                    proposal=proposal.id,
                    mint=proposal.mint,
                    raw=raw,
                    automatic=decision.verdict == "auto",
                    summary=effect.summary,
                    message=_message_hash(fresh.transaction),
                )
                self._reservations.append(entry["hash"])
            reserved.append(True)
            return True

        try:
            # Never `again`: a send this server reported has left the journal; one still there landed
            # and was never told (a server killed after its send), so the person learns of it first
            # (`refused.landed_before`, naming it) instead of a second write going out unsaid.
            outcome = prepared.send(confirm=confirm, progress=progress)
        except BaseException as exc:
            kind = getattr(exc, "kind", type(exc).__name__)
            self.audit.append("failed", proposal=proposal.id, kind=kind, signed=bool(reserved))
            # Before the reservation nothing was signed. After it, only the refusals below are known to
            # have sent nothing; after any other error a send may have happened (a failure or an
            # expiry is the RPC's word, which a lying provider can give for a deposit that landed), so
            # the amount stays reserved: the limits over-count rather than under-count.
            if reserved and kind in NOTHING_SENT:
                self.audit.append("released", proposal=proposal.id, why=kind)
            raise
        status = outcome.result.get("status")
        signature = getattr(outcome, "signature", None)
        self.audit.append(
            "outcome", proposal=proposal.id, status=status, signature=signature, slot=getattr(outcome, "slot", None)
        )
        # A sent transaction's reservation stays, whatever the RPC then says of it: "failed" or "expired"
        # is the provider's word, and one that lies would free the limits for a deposit that landed.
        # The limits over-count a write that truly failed, never under-count one that moved money.
        if status in ("failed", "expired"):
            return Executed(outcome, str(status))
        if getattr(outcome, "already_processed", False):
            # These exact bytes had landed already (an identical write built in the same slot, by this
            # server, another, or a command): nothing new moved, and the first one's reservation counts.
            first = self._first_with(proposal)
            self.audit.append(
                "released", proposal=proposal.id, why="already sent", signature=signature, first_proposal=first
            )
            return Executed(outcome, "already_sent", first)
        return Executed(outcome, str(status))

    def _first_with(self, proposal: Proposal) -> str | None:
        """The earlier proposal whose reservation was for the same message as this one's, if any."""
        reservations = [e for e in self.audit.entries() if e.get("event") == "reserved"]
        mine = next((e.get("message") for e in reservations if e.get("proposal") == proposal.id), None)
        first = next((e for e in reservations if e.get("message") == mine and e.get("proposal") != proposal.id), None)
        return None if first is None else str(first.get("proposal"))

    def _prepared(self, intent: AgentAsk) -> Any:
        row, options = intent.row, dict(intent.options)
        if not row.amount:
            return self._client.prepare_action(row.name, intent.asset, **options)
        # The decimal string goes to the library as text: its parser is the command line's (no exponents,
        # no more fraction digits than the token has, nothing past u64).
        amount = None if intent.everything else intent.amount
        return self._client.prepare_action(row.name, intent.asset, amount, all=intent.everything, **options)


@dataclass(frozen=True)
class Executed:
    """What an execute did: the library's outcome, its status for the agent, and for `already_sent`
    the proposal that first sent these same bytes (None when it was not one of the log's)."""

    outcome: Any
    status: str  # confirmed, failed, expired, pending or already_sent
    first_proposal: str | None = None


def _message_hash(transaction: Any) -> str:
    """What identifies the bytes a reservation is for: two proposals that build the same message send
    the same transaction (same signature), which lands once."""
    from solders.message import to_bytes_versioned

    return hashlib.sha256(to_bytes_versioned(transaction.message)).hexdigest()
