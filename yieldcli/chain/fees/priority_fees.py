"""The `auto` priority fee: what recently landed transactions paid to lock the same accounts.

The price is read from the RPC (getRecentPrioritizationFees), a remote party: every fee it reports is
checked to be a u64, and `yieldcli.chain.fees.compute_budget` caps what `auto` may cost.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, Protocol

from solders.instruction import Instruction
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from yieldcli.amounts import U64_MAX
from yieldcli.chain.rpc.types import Simulation
from yieldcli.errors import ServiceError

# getRecentPrioritizationFees takes at most this many accounts.
MAX_FEE_ACCOUNTS = 128
# getRecentPrioritizationFees gives, per recent slot (up to 150), the lowest price paid by a landed
# transaction that locked the accounts asked about. Its 75th percentile is a price at or above that
# lowest price in three recent slots of four: the median is often 0 on quiet accounts (no better
# than no fee when they turn busy), and the top of the range is set by a few bursts (liquidations,
# arbitrage) a deposit need not outbid. --max-fee bounds what `auto` may cost.
AUTO_PERCENTILE = 75


def writable_accounts(instructions: Sequence[Instruction]) -> list[Pubkey]:
    """Each writable account once, in order of first use: what a priority fee competes for."""
    seen: dict[Pubkey, None] = {}
    for ix in instructions:
        for meta in ix.accounts:
            if meta.is_writable:
                seen.setdefault(meta.pubkey, None)
    return list(seen)


class CallRpc(Protocol):
    async def call(self, method: str, params: list[Any] | None = None) -> Any: ...


async def recent_prioritization_fees(rpc: CallRpc, accounts: Sequence[Pubkey]) -> list[int]:
    """Per recent slot, the lowest price (micro-lamports) a transaction locking `accounts` paid to land."""
    return fees_of(await rpc.call(*fees_question(accounts)))


def fees_question(accounts: Sequence[Pubkey]) -> tuple[str, list[Any]]:
    return "getRecentPrioritizationFees", [[str(a) for a in accounts][:MAX_FEE_ACCOUNTS]]


def fees_of(result: Any) -> list[int]:
    """getRecentPrioritizationFees' answer as prices, each checked to be a u64."""
    if not isinstance(result, list):
        raise ServiceError("the RPC answered getRecentPrioritizationFees with something other than a list")
    fees = []
    for item in result:
        fee = item.get("prioritizationFee") if isinstance(item, dict) else None
        if type(fee) is not int or not 0 <= fee <= U64_MAX:
            raise ServiceError(f"the RPC answered getRecentPrioritizationFees with an invalid fee {fee!r}")
        fees.append(fee)
    return fees


def percentile(values: Sequence[int], pct: int = AUTO_PERCENTILE) -> int:
    """Nearest-rank percentile (a value that was really paid, never an interpolation); 0 if empty."""
    if not values:
        return 0
    ordered = sorted(values)
    rank = -(-pct * len(ordered) // 100)  # ceil
    return ordered[max(rank, 1) - 1]


async def auto_unit_price(rpc: CallRpc, accounts: Sequence[Pubkey], pct: int = AUTO_PERCENTILE) -> int:
    return percentile(await recent_prioritization_fees(rpc, accounts), pct)


class BudgetRpc(CallRpc, Protocol):
    commitment: str

    async def simulate(
        self, tx: VersionedTransaction, *, accounts: Sequence[Pubkey] = (), commitment: str | None = None
    ) -> Simulation: ...

    async def batch(self, calls: Sequence[tuple[str, list[Any]]]) -> list[Any]: ...


async def auto_price_and_trial(
    rpc: BudgetRpc, accounts: Sequence[Pubkey], trial: VersionedTransaction
) -> tuple[int, Simulation]:
    """The auto price and the trial's simulation in one exchange: the fee question adds no round trip."""
    from yieldcli.chain.rpc.read_around import simulation_config, simulation_of

    simulate = (
        "simulateTransaction",
        [base64.b64encode(bytes(trial)).decode("ascii"), simulation_config(rpc.commitment, [])],
    )
    fees, simulated = await rpc.batch([fees_question(accounts), simulate])
    with simulated.reading() as answered:
        simulation = simulation_of(answered["value"], [], [])
    return percentile(fees_of(fees.value())), simulation
