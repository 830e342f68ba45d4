"""The compute-unit limit the runtime reserves for a transaction that sets none, as agave counts it
(`compute_budget_instruction_details.rs`, SIMD-0170): 3,000 units for each instruction of a builtin
program that was not migrated to an on-chain program (the compute-budget program's own instructions
included), 200,000 for every other instruction, the sum at most 1,400,000. The priority fee is this
limit times the price, so a transaction that sets a price and no limit pays for it.

The builtins are agave's list (`builtins-default-costs`): System, Vote, Compute Budget, the BPF
loaders and loader v4, and the Secp256k1 and Ed25519 precompiles. Stake, Config and Address Lookup
Table were migrated (200,000 each), and the Secp256r1 precompile was never a builtin (200,000).
"""

from __future__ import annotations

from collections.abc import Iterable

VOTE_PROGRAM = "Vote111111111111111111111111111111111111111"
BUILTIN_PROGRAMS = frozenset(
    {
        "11111111111111111111111111111111",  # System
        VOTE_PROGRAM,
        "ComputeBudget111111111111111111111111111111",
        "BPFLoaderUpgradeab1e11111111111111111111111",
        "BPFLoader1111111111111111111111111111111111",  # deprecated loader
        "BPFLoader2111111111111111111111111111111111",
        "LoaderV411111111111111111111111111111111111",
        "KeccakSecp256k11111111111111111111111111111",
        "Ed25519SigVerify111111111111111111111111111",
    }
)
BUILTIN_UNITS_PER_INSTRUCTION = 3_000  # MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT
DEFAULT_UNITS_PER_INSTRUCTION = 200_000  # DEFAULT_INSTRUCTION_COMPUTE_UNIT_LIMIT
MAX_COMPUTE_UNIT_LIMIT = 1_400_000


def default_unit_limit(program_ids: Iterable[str], builtins: frozenset[str] = BUILTIN_PROGRAMS) -> int:
    """The limit reserved for top-level instructions of `program_ids` (one entry per instruction, the
    compute-budget ones included) when none of them sets a limit."""
    units = sum(
        BUILTIN_UNITS_PER_INSTRUCTION if program in builtins else DEFAULT_UNITS_PER_INSTRUCTION
        for program in program_ids
    )
    return min(units, MAX_COMPUTE_UNIT_LIMIT)
