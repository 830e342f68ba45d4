"""What the user asked (`Intent`) and the guard's verdict on a transaction (`Check`): plain data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from yieldcli.solana.programs import PROGRAM_NAMES

DEFAULT_MAX_SOL_COST = 10_000_000  # 0.01 SOL: fee plus rent a transaction may take without a flag
# A priority fee the service set, accepted when the user set none: 0.0001 SOL (20 times the base fee).
UNASKED_PRIORITY_FEE = 100_000


@dataclass(frozen=True)
class Intent:
    """What the user asked for. `amount` is in base units; None means --all."""

    action: str  # deposit, withdraw, close-account, or "transaction" (anything that costs only the fee)
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
    # A deposit's destinations trusted on this cluster for this strategy and mint: (token account, mint).
    trusted: tuple[tuple[str, str], ...] = ()
    trust_file: str | None = None  # where the user's trusted destinations are kept (`yieldcli.trust`)
    signers: tuple[str, ...] = ()  # the keys we sign with: the payer is the user's when it is one of them
    nonce: str | None = None  # the durable-nonce account the user asked this transaction to be built on
    token_account: str | None = None  # the user's token account named for the deposit's source or the payout
    position: str | None = None  # close-account: the position the user named by its address
    max_priority_fee: int | None = UNASKED_PRIORITY_FEE  # None: the user set the priority fee or a fee cap
    decimals: int | None = None  # what `amount` was converted from token units with (None: base units)
    named_as: str | None = None  # the symbol the user named a listed (not built-in) token by

    @property
    def payer_is_users(self) -> bool:
        """The fee payer's SOL is the user's: the wallet pays, or we sign for the payer."""
        return self.payer == self.wallet or self.payer in self.signers

    @property
    def other_signers(self) -> frozenset[str]:
        """Keys we sign with that are neither the wallet nor the payer (a nonce's authority, or a keypair
        the service made a signer): they may only advance the durable nonce asked for; whatever else
        they own or are the authority of stays exactly as it is."""
        return frozenset(self.signers) - {self.wallet, self.payer}

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "wallet": self.wallet,
            "payer": self.payer,
            "mint": self.mint,
            "amount": "all" if self.amount is None else self.amount,
            "strategy": self.strategy,
            "exclude_fees": self.exclude_fees,
            "unwrap": self.unwrap,
            "max_sol_cost": self.max_sol_cost,
            "strategy_program": self.strategy_program,
            "recipient": self.funds_recipient,
            "nonce": self.nonce,
            "token_account": self.token_account,
            "position": self.position,
            "trusted_destinations": [{"destination": d, "mint": m} for d, m in self.trusted],
        }


@dataclass(frozen=True)
class Verdict:
    """One instruction's verdict; `index` counts from 0 (as in the review's JSON), the text from 1 (as the
    review shows #n). `strategy` names the strategy a strategy-program instruction targets."""

    index: int
    program: str
    kind: str
    ok: bool
    reason: str
    untrusted: str | None = None  # refused, and would pass were this destination trusted (a deposit's plain transfer)
    strategy: dict[str, Any] | None = None  # {"id", "key", "mint", "position"} of a strategy instruction

    def to_dict(self) -> dict[str, Any]:
        found = {
            "index": self.index,
            "program": self.program,
            "program_name": PROGRAM_NAMES.get(self.program),
            "kind": self.kind,
            "ok": self.ok,
            "reason": self.reason,
        }
        if self.strategy is not None:
            found["strategy"] = self.strategy
        return found


@dataclass(frozen=True)
class Check:
    """The verdict: expected and observed effect, every difference, and the one-line summary."""

    expected: dict[str, Any]
    observed: dict[str, Any]
    differences: tuple[str, ...]
    summary: str
    instructions: tuple[Verdict, ...] = ()
    verified: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()  # what could not be proven (a strategy program whose layout is not known)

    @property
    def untrusted(self) -> tuple[str, ...]:
        """Destinations of refused plain transfers that would pass if the user trusted them (a deposit's)."""
        return tuple(dict.fromkeys(v.untrusted for v in self.instructions if v.untrusted and not v.ok))

    @property
    def ok(self) -> bool:
        return not self.differences

    def to_dict(self) -> dict[str, Any]:
        return {
            "expected": self.expected,
            "observed": self.observed,
            "differences": list(self.differences),
            "summary": self.summary,
            "instructions": [v.to_dict() for v in self.instructions],
            "verified": list(self.verified),
            "unverified": list(self.unverified),
            "untrusted_destinations": list(self.untrusted),
        }
