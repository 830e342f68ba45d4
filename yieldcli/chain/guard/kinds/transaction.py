"""A transaction with no action stated (`yield tx sign/send` without `--expect`): it may cost the fee, nothing else."""

from __future__ import annotations

from yieldcli.chain.guard.kinds.kind import Kind

KIND = Kind(
    "transaction",
    "",
    frozenset(),
    (("your SOL", "−fee, when you pay it"),),
    "`tx sign/send` without `--expect`",
    asset=False,
)
