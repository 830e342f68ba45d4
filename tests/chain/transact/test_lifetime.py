"""What makes a transaction built again "the same" as the one reviewed: the user's balance changes, the
fee, the rent and what differs from the request; the position's balance (grown by yield meanwhile) is
not one of them."""

from yieldcli.chain.guard.intent import Check
from yieldcli.chain.transact.lifetime import effect_changes

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"


def check(usdc: int, fee: int = 5000, balance: int = 2_547_318_402, differences=()) -> Check:
    observed = {
        "fee": fee,
        "rent": 0,
        "changes": [
            {"asset": "SOL", "mint": None, "change": -fee, "text": f"-{fee / 1e9:.6f} SOL"},
            {"asset": "USDC", "mint": USDC, "change": usdc, "text": f"{usdc / 1e6:+g} USDC"},
        ],
        "positions": [{"address": "C8Wo", "before": {"balance": balance}, "after": {"balance": balance - usdc}}],
    }
    return Check({"action": "deposit"}, observed, tuple(differences), "deposit")


def test_the_same_moves_are_the_same_effect_whatever_the_position_earned_meanwhile():
    assert effect_changes(check(-1_000_000), check(-1_000_000, balance=2_547_400_000)) == []


def test_another_amount_a_fee_or_a_difference_from_the_request_is_said():
    assert effect_changes(check(2_547_318_402), check(2_548_318_402)) == ["USDC: +2547.32 USDC -> +2548.32 USDC"]
    changed = effect_changes(check(-1_000_000), check(-1_000_000, fee=7000))
    assert "fee: 5000 -> 7000 lamports" in changed and any(c.startswith("SOL:") for c in changed)
    refused = effect_changes(check(-1_000_000), check(-1_000_000, differences=["the amount is 2 USDC, not 1"]))
    assert refused == ["what differs from your request: the amount is 2 USDC, not 1"]


def test_a_check_that_could_not_run_on_one_of_them_is_a_change():
    assert effect_changes(check(-1), None) == ["the intent check could not run on one of them"]
    assert effect_changes(None, None) == []
