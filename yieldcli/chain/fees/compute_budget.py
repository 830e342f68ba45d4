"""Priority fees and compute budget: read a message's budget, choose a price and a limit, cap the fee.

Fees, as the runtime charges them: a base fee per signature, plus a priority fee of
ceil(compute-unit limit × price in micro-lamports / 1,000,000) lamports. The limit is what the
transaction reserves, not what it uses, so a tight limit (the simulation's units plus a margin)
makes the same price cheaper.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.compute_budget import (
    request_heap_frame,
    set_compute_unit_limit,
    set_compute_unit_price,
    set_loaded_accounts_data_size_limit,
)
from solders.instruction import Instruction
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from yieldcli.amounts import scale

# `X as X`: the auto price's names were published here first and stay importable from here.
from yieldcli.chain.fees.priority_fees import AUTO_PERCENTILE as AUTO_PERCENTILE
from yieldcli.chain.fees.priority_fees import BudgetRpc, auto_price_and_trial, writable_accounts
from yieldcli.chain.fees.priority_fees import auto_unit_price as auto_unit_price
from yieldcli.chain.fees.priority_fees import percentile as percentile
from yieldcli.chain.fees.priority_fees import recent_prioritization_fees as recent_prioritization_fees
from yieldcli.chain.tx.instructions import decompile_message, recompile_message
from yieldcli.chain.tx.state import declared_signatures
from yieldcli.errors import Refused, ServiceError, SimulationFailed, UsageError
from yieldcli.solana import compute_units
from yieldcli.solana.programs import COMPUTE_BUDGET_PROGRAM, SYSTEM_PROGRAM
from yieldcli.solana.transaction_errors import describe_error

LAMPORTS_PER_SIGNATURE = 5_000
SOL_DECIMALS = 9
MICRO_LAMPORTS_PER_LAMPORT = 1_000_000
MAX_COMPUTE_UNIT_LIMIT = 1_400_000
MAX_U64 = 2**64 - 1
# The largest transaction a validator accepts (IPv6 MTU minus headers).
PACKET_DATA_SIZE = 1232
# The simulation measures one run; the real one can take a little more (another path through a
# program as accounts change between simulation and landing). 10% covers that drift, and 1,000
# units covers the compute-budget instructions themselves and very small transactions.
UNIT_MARGIN_PERCENT = 10
# The RPC that answers getRecentPrioritizationFees is a remote party too: without --max-fee, `auto`
# never pays more than this (0.01 SOL) in priority fee, whatever it reports.
AUTO_MAX_PRIORITY_FEE = 10_000_000
UNIT_MARGIN_FLAT = 1_000

_COMPUTE_BUDGET = Pubkey.from_string(COMPUTE_BUDGET_PROGRAM)
_SYSTEM = Pubkey.from_string(SYSTEM_PROGRAM)
_ADVANCE_NONCE = struct.pack("<I", 4)


@dataclass(frozen=True)
class ComputeBudget:
    """What a message's compute-budget instructions set; None where it sets nothing."""

    unit_limit: int | None = None
    unit_price: int | None = None  # micro-lamports per compute unit
    heap_bytes: int | None = None
    loaded_accounts_bytes: int | None = None


@dataclass(frozen=True)
class FeeSummary:
    signatures: int
    base_fee: int  # lamports: the message's signatures
    unit_limit: int
    unit_price: int  # micro-lamports per compute unit
    priority_fee: int  # lamports
    # Signatures the message's precompile instructions declare: the runtime charges each as one of the message's.
    precompile_signatures: int = 0
    precompile_fee: int = 0  # lamports

    @property
    def total(self) -> int:
        return self.base_fee + self.precompile_fee + self.priority_fee

    @staticmethod
    def sol(lamports: int) -> Decimal:
        return scale(lamports, SOL_DECIMALS)

    def to_dict(self) -> dict[str, Any]:
        return {
            "signatures": self.signatures,
            "base_fee": self.base_fee,
            "precompile_signatures": self.precompile_signatures,
            "precompile_fee": self.precompile_fee,
            "compute_unit_limit": self.unit_limit,
            "compute_unit_price": self.unit_price,
            "priority_fee": self.priority_fee,
            "total": self.total,
            # Decimal text, exact: JSON numbers would be read back as floats.
            "base_fee_sol": sol_text(self.base_fee),
            "precompile_fee_sol": sol_text(self.precompile_fee),
            "priority_fee_sol": sol_text(self.priority_fee),
            "total_sol": sol_text(self.total),
        }


def sol_text(lamports: int) -> str:
    """Lamports as SOL in plain decimal text (never an exponent): 5000 -> 0.000005."""
    return format(scale(lamports, SOL_DECIMALS).normalize(), "f")


def is_compute_budget(ix: Instruction) -> bool:
    return ix.program_id == _COMPUTE_BUDGET


def parse_compute_budget(instructions: Sequence[Instruction]) -> ComputeBudget:
    """The settings of the compute-budget instructions among `instructions`.

    Refuses what the runtime would refuse (unknown or malformed instructions, the same setting
    twice), so a fee is never computed from a budget that cannot run.
    """
    found: dict[str, int] = {}
    layouts = {
        1: ("heap_bytes", "<I"),
        2: ("unit_limit", "<I"),
        3: ("unit_price", "<Q"),
        4: ("loaded_accounts_bytes", "<I"),
    }
    for n, ix in enumerate(instructions):
        if not is_compute_budget(ix):
            continue
        data = bytes(ix.data)
        layout = layouts.get(data[0]) if data else None
        if layout is None or len(data) != 1 + struct.calcsize(layout[1]):
            raise ServiceError(
                f"instruction {n} is not a compute-budget instruction this runtime accepts (data {data[:9].hex()})"
            )
        name, fmt = layout
        if name in found:
            raise ServiceError(
                f"instruction {n} sets the {name.replace('_', ' ')} a second time; the runtime refuses that"
            )
        (found[name],) = struct.unpack(fmt, data[1:])
    return ComputeBudget(**found)


def priority_fee(unit_limit: int, unit_price: int) -> int:
    """Lamports: ceil(limit × price / 1,000,000), as the runtime rounds."""
    return -(-unit_limit * unit_price // MICRO_LAMPORTS_PER_LAMPORT)


def unit_limit_for(units_consumed: int) -> int:
    """The simulation's units plus 10% and 1,000, at most the runtime's 1.4M."""
    margin = -(-units_consumed * UNIT_MARGIN_PERCENT // 100) + UNIT_MARGIN_FLAT
    return min(MAX_COMPUTE_UNIT_LIMIT, units_consumed + margin)


def default_unit_limit(instructions: Sequence[Instruction]) -> int:
    """What the runtime reserves when no limit is set, as agave counts it: 3,000 units per instruction of a
    builtin program (the compute-budget ones included), 200,000 per other instruction, at most 1.4M."""
    return compute_units.default_unit_limit(str(ix.program_id) for ix in instructions)


def fee_summary(
    message: MessageV0 | Message,
    lookup_tables: Sequence[AddressLookupTableAccount] = (),
    *,
    lamports_per_signature: int = LAMPORTS_PER_SIGNATURE,
) -> FeeSummary:
    """Every lamport the message pays, as the runtime counts it: a base fee per signature of the message and
    per signature its precompile instructions declare (Ed25519, Secp256k1, Secp256r1), plus the priority fee."""
    instructions = decompile_message(message, lookup_tables)
    budget = parse_compute_budget(instructions)
    limit = budget.unit_limit if budget.unit_limit is not None else default_unit_limit(instructions)
    price = budget.unit_price or 0
    signatures = message.header.num_required_signatures
    verified = declared_signatures((str(ix.program_id), bytes(ix.data)) for ix in instructions)
    return FeeSummary(
        signatures,
        signatures * lamports_per_signature,
        limit,
        price,
        priority_fee(limit, price),
        verified,
        verified * lamports_per_signature,
    )


def check_max_fee(summary: FeeSummary, max_fee: int | None) -> None:
    """Refuse, before anything is signed, a transaction whose fees would pass `max_fee` lamports."""
    if max_fee is not None and summary.total > max_fee:
        raise Refused(
            f"the fees would be {summary.total} lamports ({sol_text(summary.total)} SOL: base {summary.base_fee} + "
            + (f"precompile signatures {summary.precompile_fee} + " if summary.precompile_fee else "")
            + f"priority {summary.priority_fee}), more than the maximum of {max_fee}; nothing was signed",
            kind="refused.fee.max",
        )


def check_auto_ceiling(summary: FeeSummary) -> None:
    """Refuse an `auto` priority fee above AUTO_MAX_PRIORITY_FEE when no --max-fee was given."""
    if summary.priority_fee > AUTO_MAX_PRIORITY_FEE:
        raise Refused(
            f"the auto priority fee would be {summary.priority_fee} lamports ({sol_text(summary.priority_fee)} SOL: "
            f"{summary.unit_price} micro-lamports per unit for {summary.unit_limit} units), more than the "
            f"{sol_text(AUTO_MAX_PRIORITY_FEE)} SOL auto pays without a fee cap; nothing was signed",
            kind="refused.fee.auto",
        )


def budget_instructions(unit_limit: int, unit_price: int, keep: ComputeBudget = ComputeBudget()) -> list[Instruction]:
    """Limit and price, plus the heap and loaded-accounts sizes of `keep` (programs may need them)."""
    if not 0 < unit_limit <= MAX_COMPUTE_UNIT_LIMIT:
        raise UsageError(f"invalid compute-unit limit {unit_limit}: expected 1 to {MAX_COMPUTE_UNIT_LIMIT}")
    if not 0 <= unit_price <= MAX_U64:
        raise UsageError(f"invalid compute-unit price {unit_price}: expected 0 to {MAX_U64} micro-lamports")
    # A price of 0 is no price: `auto` on quiet accounts gives 0, and an instruction saying so only costs bytes.
    out = [set_compute_unit_limit(unit_limit), *([set_compute_unit_price(unit_price)] if unit_price else [])]
    if keep.heap_bytes is not None:
        out.append(request_heap_frame(keep.heap_bytes))
    if keep.loaded_accounts_bytes is not None:
        out.append(set_loaded_accounts_data_size_limit(keep.loaded_accounts_bytes))
    return out


def with_compute_budget(instructions: Sequence[Instruction], unit_limit: int, unit_price: int) -> list[Instruction]:
    """`instructions` with their compute-budget instructions replaced by ours, placed first.

    A durable-nonce transaction keeps its advance-nonce instruction first (the runtime requires it);
    ours then follow it. Heap and loaded-accounts sizes already set are kept.
    """
    keep = parse_compute_budget(instructions)
    others = [ix for ix in instructions if not is_compute_budget(ix)]
    ours = budget_instructions(unit_limit, unit_price, keep)
    if others and _is_advance_nonce(others[0]):
        return [others[0], *ours, *others[1:]]
    return [*ours, *others]


def _is_advance_nonce(ix: Instruction) -> bool:
    return ix.program_id == _SYSTEM and bytes(ix.data) == _ADVANCE_NONCE


@dataclass(frozen=True)
class Budgeted:
    transaction: VersionedTransaction  # unsigned, compiled again with the new compute budget
    fees: FeeSummary
    units_consumed: int | None  # measured by the simulation; None when the budget was left as it was


def parse_priority_fee(text: str) -> int | str:
    """A --priority-fee value: 'auto', or a whole number of micro-lamports per compute unit."""
    value = text.strip().lower()
    if value == "auto":
        return "auto"
    if not value.isascii() or not value.isdigit() or int(value) > MAX_U64:
        raise UsageError(
            f"invalid priority fee {text!r}",
            hint="give auto, or a whole number of micro-lamports per compute unit (1,000,000 = 1 lamport)",
        )
    return int(value)


async def budget_transaction(
    rpc: BudgetRpc,
    tx: VersionedTransaction,
    lookup_tables: Sequence[AddressLookupTableAccount] = (),
    *,
    priority_fee: int | str | None,
    max_fee: int | None = None,
    lamports_per_signature: int = LAMPORTS_PER_SIGNATURE,
) -> Budgeted:
    """With a priority fee, `apply_priority_fee`; without one, the transaction as it is, its fees summed
    and capped by `max_fee` all the same."""
    if priority_fee is not None:
        return await apply_priority_fee(
            rpc,
            tx,
            lookup_tables,
            unit_price=priority_fee,
            max_fee=max_fee,
            lamports_per_signature=lamports_per_signature,
        )
    if not isinstance(tx.message, (Message, MessageV0)):
        raise UsageError(f"cannot read the fee of a {type(tx.message).__name__} transaction")
    fees = fee_summary(tx.message, lookup_tables, lamports_per_signature=lamports_per_signature)
    check_max_fee(fees, max_fee)
    return Budgeted(tx, fees, None)


async def apply_priority_fee(
    rpc: BudgetRpc,
    tx: VersionedTransaction,
    lookup_tables: Sequence[AddressLookupTableAccount] = (),
    *,
    unit_price: int | str,
    max_fee: int | None = None,
    lamports_per_signature: int = LAMPORTS_PER_SIGNATURE,
) -> Budgeted:
    """Replace the compute budget of an unsigned transaction: price `unit_price` ('auto' or micro-lamports),
    limit from a simulation at the maximum limit; refuse if the fees would pass `max_fee` lamports.

    The payer, blockhash, lookup tables and every other instruction (order and account metas) stay.
    """
    if any(sig != Signature.default() for sig in tx.signatures):
        raise UsageError(
            "cannot change the fee of a transaction that already carries a signature: it would no longer verify",
            hint="set the priority fee when the transaction is built, before anyone signs it",
        )
    message = tx.message
    if not isinstance(message, (Message, MessageV0)):
        raise UsageError(
            f"cannot set the fee of a {type(message).__name__} transaction: only legacy and v0 messages are supported"
        )
    instructions = decompile_message(message, lookup_tables)
    if unit_price != "auto" and (not isinstance(unit_price, int) or isinstance(unit_price, bool)):
        raise UsageError(
            f"invalid priority fee {unit_price!r}",
            hint="give auto or a whole number of micro-lamports per compute unit",
        )
    # Measured at price 0: the price does not change the units used, and the full 1.4M limit at the
    # real price could cost more than the payer holds, failing a transaction that can pay its real fee.
    trial = _unsigned(
        recompile_message(message, with_compute_budget(instructions, MAX_COMPUTE_UNIT_LIMIT, 0), lookup_tables)
    )
    if isinstance(unit_price, int):
        price, simulation = unit_price, await rpc.simulate(trial)
    else:
        price, simulation = await auto_price_and_trial(rpc, writable_accounts(instructions), trial)
    if not simulation.ok or simulation.units_consumed is None:
        why = (
            describe_error(simulation.err)
            if simulation.err is not None
            else "the RPC did not report the units consumed"
        )
        raise SimulationFailed(f"the simulation to measure compute units failed: {why}; nothing was signed or sent")
    limit = unit_limit_for(simulation.units_consumed)
    final_message = recompile_message(message, with_compute_budget(instructions, limit, price), lookup_tables)
    fees = fee_summary(final_message, lookup_tables, lamports_per_signature=lamports_per_signature)
    final = _unsigned(final_message)
    check_max_fee(fees, max_fee)
    size = len(bytes(final))
    if size > PACKET_DATA_SIZE:
        # The budget instructions add up to ~30 bytes: a transaction already at the limit has no room.
        raise Refused(
            f"with a compute budget the transaction would be {size} bytes, "
            f"more than the {PACKET_DATA_SIZE} a validator accepts",
            kind="refused.fee.size",
        )
    return Budgeted(final, fees, simulation.units_consumed)


def _unsigned(message: MessageV0 | Message) -> VersionedTransaction:
    return VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)
