"""The sandbox service's state: strategies, funds, and per-wallet token balances and positions.

The state is one JSON file, created from the demo data when missing (or on `reset()`) and replaced
atomically on every change under the state folder's lock, so it survives between processes and no
process saves over another's change. Integers go through the json module
and stay exact at any size (u128 amounts included).

Yield records are not stored separately: every position is a user's stake in one fund, and
/user-yield reports one record per position, so the two can never disagree.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from yieldcli.files import write_atomically
from yieldcli.sandbox import demo
from yieldcli.sandbox.chain.lock import file_stamp, folder_lock, remove_stale_temporaries
from yieldcli.sandbox.rows import (
    FUND_STATUSES,
    SYNTH_BALANCE_KEYS,
    SYNTH_POSITION_KEYS,
    SYNTH_YIELD_KEYS,
    ConcatRows,
    IndexedRows,
    ListRows,
    Rows,
    balance_item,
    fund_status,
    position_item,
    synthetic_balance,
    synthetic_position,
    synthetic_rows,
    synthetic_token,
    synthetic_yield,
    yield_item,
)
from yieldcli.tokens import by_mint, by_symbol


class LedgerError(Exception):
    """A change the ledger refuses (unknown strategy, no position, amount too large) or an unreadable file."""


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# ---- the ledger ----------------------------------------------------------------------------------


class Ledger:
    """State of the sandbox service, persisted in `path`.

    `seed_positions` and `seed_wallets` add synthetic data for benchmarks. It is computed from
    indices and kept in memory only: writing 100000 items to the state file on every start (and
    on every deposit) would make start-up and each change slow, and the data is reproducible
    anyway. A seeded wallet is copied into the file only when a change is recorded for it.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        seed_positions: int | None = None,
        seed_wallets: int | None = None,
        now: Callable[[], str] = _utc_now,
    ):
        self.path = Path(path)
        self.seed_positions = max(0, seed_positions or 0)
        self.seed_wallets = max(0, seed_wallets or 0)
        self._now = now
        # Shared with the sandbox chain on the same folder and with other processes: every
        # load-modify-save below runs under it, so no process saves over another's change.
        self._lock = folder_lock(self.path.parent)
        self._state: dict[str, Any] = {}
        self._stamp: tuple[int, int, int] | None = None
        self._seeded_index: dict[str, int] | None = None
        self._seeded_ready = threading.Event()
        self._load()
        if self.seed_wallets:
            # Hashing and encoding the addresses takes about 1 s per 100000 wallets: done in the
            # background so start-up does not wait; the first lookup of a wallet does.
            threading.Thread(target=self._build_seeded_index, name="seed-wallets", daemon=True).start()

    # -- persistence

    def _load(self) -> None:
        with self._lock:
            remove_stale_temporaries(self.path)
            try:
                text = self.path.read_text(encoding="utf-8")
            except FileNotFoundError:
                self._state = demo.initial_state()
                self._save()
                return
            try:
                state = json.loads(text)
            except ValueError as exc:
                raise LedgerError(
                    f"sandbox state file {self.path} is not valid JSON ({exc}); reset the sandbox"
                ) from None
            if not isinstance(state, dict) or state.get("format") != demo.STATE_FORMAT:
                raise LedgerError(f"{self.path} is not a sandbox state file; reset the sandbox")
            if state.get("version") != demo.STATE_VERSION:
                raise LedgerError(
                    f"sandbox state file {self.path} has version {state.get('version')!r}, "
                    f"expected {demo.STATE_VERSION}; reset the sandbox"
                )
            self._state = state
            self._stamp = file_stamp(self.path)

    def _save(self) -> None:
        write_atomically(self.path, json.dumps(self._state, indent=1) + "\n")
        self._stamp = file_stamp(self.path)

    def _refresh(self) -> None:
        """Reload when another process (or another Ledger) replaced the file."""
        if file_stamp(self.path) != self._stamp:
            self._load()

    def reset(self) -> None:
        """Back to the demo data (synthetic seeds are unaffected: they are never stored)."""
        with self._lock:
            self._state = demo.initial_state()
            self._save()

    # -- reference data

    def token(self, mint: str) -> dict[str, Any]:
        """symbol, name and decimals of a mint; unknown mints get a placeholder."""
        meta: dict[str, Any] | None = self._state["tokens"].get(mint)
        if meta is not None:
            return meta
        index = demo.synthetic_index(mint) if self.seed_positions else None
        if index is not None and index < self.seed_positions:
            return synthetic_token(index)
        known = by_mint(mint)
        if known is not None:
            return {"symbol": known.symbol, "name": known.name, "decimals": known.decimals}
        return {"symbol": mint[:4], "name": "Unknown token", "decimals": 0}

    def mint_of_symbol(self, symbol: str) -> str | None:
        """The mint of a token symbol (any case) the sandbox knows, else None."""
        wanted = symbol.lower()
        with self._lock:
            self._refresh()
            tokens: dict[str, dict[str, Any]] = self._state["tokens"]
            for mint, meta in tokens.items():
                if str(meta.get("symbol", "")).lower() == wanted:
                    return mint
        known = by_symbol(symbol)
        return known.mint if known else None

    def strategy_ids(self) -> list[str]:
        with self._lock:
            self._refresh()
            return list(self._state["strategies"])

    def strategy(self, strategy_id: str) -> dict[str, Any] | None:
        """The strategy-info body, or None."""
        with self._lock:
            self._refresh()
            s = self._state["strategies"].get(strategy_id)
            if s is None:
                return None
            return {
                "strategy_id": s["strategy_id"],
                "strategy_name": s["strategy_name"],
                "assets": list(s["apy_per_asset"]),
                "apy": s["apy"],
                "apy_per_asset": dict(s["apy_per_asset"]),
                "status_per_asset": {m: fund_status(self._fund_for(strategy_id, m)) for m in s["apy_per_asset"]},
            }

    def set_fund_status(self, strategy_id: str, mint: str, status: str) -> dict[str, Any]:
        """Mark the fund of `strategy_id` for `mint` Live, Paused or WithdrawOnly; returns the fund."""
        if status not in FUND_STATUSES:
            raise LedgerError(f"a fund's status is one of {', '.join(FUND_STATUSES)}, not {status!r}")
        with self._lock:
            self._refresh()
            fund = self._fund_or_error(strategy_id, mint)
            fund["status"] = status
            self._save()
            return dict(fund)

    def fund(self, fund_id: str) -> dict[str, Any] | None:
        with self._lock:
            self._refresh()
            fund: dict[str, Any] | None = self._state["funds"].get(fund_id)
            return fund

    def fund_for(self, strategy_id: str, mint: str) -> dict[str, Any] | None:
        with self._lock:
            self._refresh()
            return self._fund_for(strategy_id, mint)

    def _fund_for(self, strategy_id: str, mint: str) -> dict[str, Any] | None:
        funds: dict[str, dict[str, Any]] = self._state["funds"]
        fund = funds.get(demo.fund_id_for(strategy_id, mint))
        if fund is None:
            for f in funds.values():
                if f["strategy_id"] == strategy_id and f["mint"] == mint:
                    return f
        return fund

    # -- wallets

    def _build_seeded_index(self) -> None:
        index = {demo.seeded_wallet_address(j): j for j in range(self.seed_wallets)}
        self._seeded_index = index
        self._seeded_ready.set()

    def _seeded(self, wallet: str) -> int | None:
        if not self.seed_wallets:
            return None
        self._seeded_ready.wait()
        assert self._seeded_index is not None
        return self._seeded_index.get(wallet)

    def _wallet(self, wallet: str) -> dict[str, Any] | None:
        """The stored wallet, else a seeded one (not stored), else None."""
        stored: dict[str, Any] | None = self._state["wallets"].get(wallet)
        if stored is not None:
            return stored
        j = self._seeded(wallet)
        return demo.seeded_wallet_data(j) if j is not None else None

    def _wallet_for_change(self, wallet: str) -> dict[str, Any]:
        data = self._wallet(wallet)
        if data is None:
            data = {"tokens": {}, "positions": {}}
        self._state["wallets"][wallet] = data
        return data

    def _synthetic_for(self, wallet: str) -> int:
        return self.seed_positions if wallet == demo.DEMO_WALLET else 0

    def wallet_tokens(self, wallet: str) -> dict[str, int]:
        """Raw token amounts held in the wallet itself (outside any position), by mint."""
        with self._lock:
            self._refresh()
            data = self._wallet(wallet)
            return dict(data["tokens"]) if data else {}

    def wallets(self) -> list[str]:
        with self._lock:
            self._refresh()
            return list(self._state["wallets"])

    # -- listings (API item shapes)

    def _position_item(self, fund: dict[str, Any], pos: dict[str, Any]) -> dict[str, Any]:
        strategy = self._state["strategies"].get(fund["strategy_id"], {})
        return position_item(fund, pos, self.token(fund["mint"]), strategy.get("strategy_name", ""))

    def _positions_of(self, data: dict[str, Any] | None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        if not data:
            return []
        funds = self._state["funds"]
        return [(funds[fid], pos) for fid, pos in data["positions"].items() if fid in funds]

    def positions(self, wallet: str, strategy_id: str, asset: str | None = None) -> Rows:
        """Items of /breeze-balances for one wallet and strategy, optionally one mint only."""
        with self._lock:
            self._refresh()
            items = [
                self._position_item(fund, pos)
                for fund, pos in self._positions_of(self._wallet(wallet))
                if fund["strategy_id"] == strategy_id and (asset is None or fund["mint"] == asset)
            ]
            parts: list[Rows] = [ListRows(items)]
            n = self._synthetic_for(wallet)
            if n and strategy_id == demo.DEMO_STRATEGY_ID:
                parts.append(synthetic_rows(n, asset, synthetic_position, SYNTH_POSITION_KEYS))
            return ConcatRows(parts)

    def balances(self, wallet: str, asset: str | None = None) -> Rows:
        """Items of /user-balances: wallet tokens plus positions, one item per mint."""
        with self._lock:
            self._refresh()
            data = self._wallet(wallet)
            by_mint_positions: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
            for fund, pos in self._positions_of(data):
                by_mint_positions.setdefault(fund["mint"], []).append((fund, pos))
            mints = list(data["tokens"]) if data else []
            mints += [m for m in by_mint_positions if m not in (data["tokens"] if data else {})]
            items = []
            for mint in mints:
                if asset is not None and mint != asset:
                    continue
                wallet_amount = data["tokens"].get(mint, 0) if data else 0
                items.append(self._balance_item(mint, wallet_amount, by_mint_positions.get(mint, [])))
            parts: list[Rows] = [ListRows(items)]
            n = self._synthetic_for(wallet)
            if n:
                parts.append(synthetic_rows(n, asset, synthetic_balance, SYNTH_BALANCE_KEYS))
            return ConcatRows(parts)

    def _balance_item(
        self, mint: str, wallet_amount: int, positions: list[tuple[dict[str, Any], dict[str, Any]]]
    ) -> dict[str, Any]:
        return balance_item(mint, self.token(mint), wallet_amount, positions)

    def yield_records(self, wallet: str, fund_id: str | None = None) -> Rows:
        """Items of /user-yield: one record per position, across strategies."""
        with self._lock:
            self._refresh()
            items = [
                self._yield_item(fund, pos)
                for fund, pos in self._positions_of(self._wallet(wallet))
                if fund_id is None or fund["fund_id"] == fund_id
            ]
            parts: list[Rows] = [ListRows(items)]
            n = self._synthetic_for(wallet)
            if n:
                if fund_id is None:
                    indices: range | list[int] = range(n)
                else:
                    k = demo.synthetic_fund_index(fund_id)
                    indices = [k] if k is not None and k < n else []
                parts.append(IndexedRows(indices, synthetic_yield, SYNTH_YIELD_KEYS))
            return ConcatRows(parts)

    def _yield_item(self, fund: dict[str, Any], pos: dict[str, Any]) -> dict[str, Any]:
        return yield_item(fund, pos, self.token(fund["mint"])["symbol"])

    # -- changes confirmed on chain

    def _fund_or_error(self, strategy_id: str, mint: str) -> dict[str, Any]:
        if strategy_id not in self._state["strategies"]:
            raise LedgerError("Strategy not found")
        fund = self._fund_for(strategy_id, mint)
        if fund is None:
            raise LedgerError(f"strategy {strategy_id} does not support asset {mint}")
        return fund

    def wallet_positions(self, wallet: str) -> list[tuple[str, str, int, int]]:
        """(strategy_id, mint, value, deposited) of the wallet's positions, synthetic seeds left out."""
        with self._lock:
            self._refresh()
            return [
                (f["strategy_id"], f["mint"], pos["value"], pos["deposited"])
                for f, pos in self._positions_of(self._wallet(wallet))
            ]

    def sync_wallet(
        self,
        wallet: str,
        tokens: dict[str, int] | None = None,
        positions: Iterable[tuple[str, str, int | None, int]] = (),
    ) -> None:
        """Make the wallet agree with the chain, in one save.

        `tokens`: mint -> amount the wallet holds on chain. A mint the ledger does not list yet is
        added only when the amount is not zero. Mints not named are left as they are (tokens the
        chain does not know, such as the demo's extra tokens).

        `positions`: (strategy_id, mint, value, deposited) as the wallet's position account on chain
        records them (value None: the account is closed, the position goes).
        """
        with self._lock:
            self._refresh()
            changes = [(self._fund_or_error(sid, mint), value, deposited) for sid, mint, value, deposited in positions]
            data = self._wallet_for_change(wallet)
            now = self._now()
            for mint, amount in (tokens or {}).items():
                if amount or mint in data["tokens"]:
                    data["tokens"][mint] = amount
            for fund, value, deposited in changes:
                fid = fund["fund_id"]
                pos = data["positions"].get(fid)
                if value is None:
                    data["positions"].pop(fid, None)
                    continue
                if pos is None:
                    pos = {"deposited": 0, "value": 0, "entry_date": now, "last_updated": now}
                    data["positions"][fid] = pos
                if (value, deposited) != (pos["value"], pos["deposited"]):
                    pos["value"], pos["deposited"] = value, deposited
                    pos["last_updated"] = now
            self._save()
