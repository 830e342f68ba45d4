"""Listings as sequences that build an item only when asked, and the synthetic items of the seeds.

A wallet seeded with 100000 synthetic positions can be sorted by one field and paged without
materialising every item. The synthetic items are computed from their index; they are benchmark
data, never stored and never on the sandbox chain.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from yieldcli.sandbox import demo


class Rows:
    def __len__(self) -> int:
        raise NotImplementedError

    def get(self, i: int) -> dict[str, Any]:
        raise NotImplementedError

    def key(self, i: int, field: str) -> Any:
        return self.get(i)[field]

    def all(self) -> list[dict[str, Any]]:
        return [self.get(i) for i in range(len(self))]


class ListRows(Rows):
    def __init__(self, items: list[dict[str, Any]]):
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def get(self, i: int) -> dict[str, Any]:
        return self.items[i]


class IndexedRows(Rows):
    """Items made from an index (0..n-1) on demand; `indices` selects which ones are listed."""

    def __init__(
        self,
        indices: range | list[int],
        make: Callable[[int], dict[str, Any]],
        keys: dict[str, Callable[[int], Any]],
    ):
        self.indices = indices
        self.make = make
        self.keys = keys

    def __len__(self) -> int:
        return len(self.indices)

    def get(self, i: int) -> dict[str, Any]:
        return self.make(self.indices[i])

    def key(self, i: int, field: str) -> Any:
        fn = self.keys.get(field)
        return fn(self.indices[i]) if fn else self.get(i)[field]


class ConcatRows(Rows):
    def __init__(self, parts: Iterable[Rows]):
        self.parts = [p for p in parts if len(p)]

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def _locate(self, i: int) -> tuple[Rows, int]:
        for part in self.parts:
            if i < len(part):
                return part, i
            i -= len(part)
        raise IndexError(i)

    def get(self, i: int) -> dict[str, Any]:
        part, j = self._locate(i)
        return part.get(j)

    def key(self, i: int, field: str) -> Any:
        part, j = self._locate(i)
        return part.key(j, field)


# ---- synthetic items (seed_positions)


def synthetic_rows(
    n: int,
    asset: str | None,
    make: Callable[[int], dict[str, Any]],
    keys: dict[str, Callable[[int], Any]],
) -> IndexedRows:
    if asset is None:
        indices: range | list[int] = range(n)
    else:
        k = demo.synthetic_index(asset)
        indices = [k] if k is not None and k < n else []
    return IndexedRows(indices, make, keys)


def synthetic_token(i: int) -> dict[str, Any]:
    return {"symbol": f"SYN{i}", "name": f"Synthetic Token {i}", "decimals": demo.SYNTH_DECIMALS}


def synthetic_position(i: int) -> dict[str, Any]:
    deposited, value = demo.synthetic_deposited(i), demo.synthetic_value(i)
    return {
        "apy": demo.synthetic_apy(i),
        "decimals": demo.SYNTH_DECIMALS,
        "fund_id": demo.synthetic_fund_id(i),
        "last_updated": demo.DEMO_LAST_UPDATED,
        "strategy_id": demo.DEMO_STRATEGY_ID,
        "strategy_name": demo.DEMO_STRATEGY_NAME,
        "token_address": demo.synthetic_mint(i),
        "token_name": f"Synthetic Token {i}",
        "token_symbol": f"SYN{i}",
        "total_deposited_value": deposited,
        "total_position_value": value,
        "yield_earned": value - deposited,
        "fund_status": LIVE,
    }


def synthetic_balance(i: int) -> dict[str, Any]:
    deposited, value = demo.synthetic_deposited(i), demo.synthetic_value(i)
    return {
        "decimals": demo.SYNTH_DECIMALS,
        "token_address": demo.synthetic_mint(i),
        "token_name": f"Synthetic Token {i}",
        "token_symbol": f"SYN{i}",
        "total_balance": demo.synthetic_wallet_tokens(i) + value,
        "yield_balance": {
            "amount_of_yield": str(value - deposited),
            "fund_apy": demo.synthetic_apy(i),
            "fund_id": demo.synthetic_fund_id(i),
            "funds": str(value),
        },
    }


def synthetic_yield(i: int) -> dict[str, Any]:
    deposited, value = demo.synthetic_deposited(i), demo.synthetic_value(i)
    return {
        "apy": demo.synthetic_apy(i),
        "base_asset": f"SYN{i}",
        "entry_date": demo.synthetic_date(i),
        "fund_id": demo.synthetic_fund_id(i),
        "fund_name": f"{demo.DEMO_STRATEGY_NAME} SYN{i}",
        "last_updated": demo.DEMO_LAST_UPDATED,
        "position_value": value,
        "yield_earned": value - deposited,
    }


SYNTH_POSITION_KEYS: dict[str, Callable[[int], Any]] = {
    "apy": demo.synthetic_apy,
    "decimals": lambda i: demo.SYNTH_DECIMALS,
    "total_deposited_value": demo.synthetic_deposited,
    "total_position_value": demo.synthetic_value,
    "yield_earned": lambda i: demo.synthetic_value(i) - demo.synthetic_deposited(i),
}
SYNTH_BALANCE_KEYS: dict[str, Callable[[int], Any]] = {
    "decimals": lambda i: demo.SYNTH_DECIMALS,
    "total_balance": lambda i: demo.synthetic_wallet_tokens(i) + demo.synthetic_value(i),
}
SYNTH_YIELD_KEYS: dict[str, Callable[[int], Any]] = {
    "apy": demo.synthetic_apy,
    "position_value": demo.synthetic_value,
    "yield_earned": lambda i: demo.synthetic_value(i) - demo.synthetic_deposited(i),
}


# -- the API's item shapes, from a fund, a position and the token's metadata

# A fund's status, as the service publishes it: Live takes deposits and withdrawals, WithdrawOnly
# only withdrawals, Paused neither. A fund saved before statuses were kept is Live.
LIVE, PAUSED, WITHDRAW_ONLY = "Live", "Paused", "WithdrawOnly"
FUND_STATUSES = (LIVE, PAUSED, WITHDRAW_ONLY)


def fund_status(fund: dict[str, Any] | None) -> str:
    return str(fund.get("status", LIVE)) if fund is not None else LIVE


Position = tuple[dict[str, Any], dict[str, Any]]  # (fund, position)


def position_item(
    fund: dict[str, Any], pos: dict[str, Any], meta: dict[str, Any], strategy_name: str
) -> dict[str, Any]:
    """An item of /user-funds."""
    return {
        "apy": fund["apy"],
        "decimals": meta["decimals"],
        "fund_id": fund["fund_id"],
        "last_updated": pos["last_updated"],
        "strategy_id": fund["strategy_id"],
        "strategy_name": strategy_name,
        "token_address": fund["mint"],
        "token_name": meta["name"],
        "token_symbol": meta["symbol"],
        "total_deposited_value": pos["deposited"],
        "total_position_value": pos["value"],
        "yield_earned": max(pos["value"] - pos["deposited"], 0),
        "fund_status": fund_status(fund),
    }


def balance_item(mint: str, meta: dict[str, Any], wallet_amount: int, positions: list[Position]) -> dict[str, Any]:
    """An item of /user-balances: what the wallet holds of `mint`, plus its positions in that mint."""
    item: dict[str, Any] = {
        "decimals": meta["decimals"],
        "token_address": mint,
        "token_name": meta["name"],
        "token_symbol": meta["symbol"],
        "total_balance": wallet_amount + sum(p["value"] for _, p in positions),
        "yield_balance": None,
    }
    if positions:
        # One yield_balance per mint: the sums over every fund of that mint, named after the
        # largest one, with an APY weighted by value.
        value = sum(p["value"] for _, p in positions)
        earned = sum(max(p["value"] - p["deposited"], 0) for _, p in positions)
        largest = max(positions, key=lambda fp: fp[1]["value"])[0]
        apy = round(sum(f["apy"] * p["value"] for f, p in positions) / value, 2) if value else largest["apy"]
        item["yield_balance"] = {
            "amount_of_yield": str(earned),
            "fund_apy": apy,
            "fund_id": largest["fund_id"],
            "funds": str(value),
        }
    return item


def yield_item(fund: dict[str, Any], pos: dict[str, Any], symbol: str) -> dict[str, Any]:
    """An item of /user-yield."""
    return {
        "apy": fund["apy"],
        "base_asset": symbol,
        "entry_date": pos["entry_date"],
        "fund_id": fund["fund_id"],
        "fund_name": fund["fund_name"],
        "last_updated": pos["last_updated"],
        "position_value": pos["value"],
        "yield_earned": max(pos["value"] - pos["deposited"], 0),
    }
