"""`--priority-fee auto` on accounts no recent transaction paid to lock prices at 0: the transaction then
carries a compute-unit limit and no compute-unit price instruction of 0 (bytes that pay nothing)."""

from __future__ import annotations

COMPUTE_BUDGET = "ComputeBudget111111111111111111111111111111"


def test_auto_at_zero_adds_no_price_instruction(run):
    done = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--priority-fee", "auto", "-o", "json")
    assert done.code == 0, done.stderr
    body = done.json()
    assert body["fee"]["compute_unit_price"] == 0 and body["fee"]["priority"] == 0
    kinds = [ix["kind"] for ix in body["review"]["instructions"] if ix["program_id"] == COMPUTE_BUDGET]
    assert kinds == ["setComputeUnitLimit"], kinds


def test_a_price_above_zero_is_still_set(run):
    done = run("--sandbox", "deposit", "--asset", "USDC", "--amount", "1", "--priority-fee", "1000", "-o", "json")
    assert done.code == 0, done.stderr
    body = done.json()
    kinds = [ix["kind"] for ix in body["review"]["instructions"] if ix["program_id"] == COMPUTE_BUDGET]
    assert kinds == ["setComputeUnitLimit", "setComputeUnitPrice"] and body["fee"]["compute_unit_price"] == 1000
