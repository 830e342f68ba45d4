"""The sandbox chain's file: accounts, clock and recent transactions, as one JSON document."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from solders.account import Account
from solders.pubkey import Pubkey

from yieldcli.errors import ConfigError
from yieldcli.sandbox.chain.clock import Clock
from yieldcli.sandbox.chain.records import TxRecord

# 3: the strategy keeps deposits with its own program (vaults and position accounts), not token multisigs.
STATE_VERSION = 3
# Statuses kept across restarts: the file is rewritten after every transaction, so keep it small.
MAX_PERSISTED_RECORDS = 256

_SYSVAR_OWNER = Pubkey.from_string("Sysvar1111111111111111111111111111111111111")
_NATIVE_LOADER = Pubkey.from_string("NativeLoader1111111111111111111111111111111")


def account_json(account: Account) -> dict[str, Any]:
    return {
        "lamports": account.lamports,
        "owner": str(account.owner),
        "executable": account.executable,
        "rent_epoch": account.rent_epoch,
        "data": base64.b64encode(bytes(account.data)).decode("ascii"),
    }


def dump(accounts: dict[str, Account | None], clock: Clock, records: list[TxRecord]) -> str:
    saved = {}
    for address in sorted(accounts):
        account = accounts[address]
        # Programs and sysvars come with every LiteSVM; closed accounts are simply gone.
        if account is None or account.executable or account.owner in (_SYSVAR_OWNER, _NATIVE_LOADER):
            continue
        if account.lamports == 0 and not account.data:
            continue
        saved[address] = account_json(account)
    state = {
        "version": STATE_VERSION,
        "clock": clock.to_json(),
        "accounts": saved,
        # vars(), not asdict(): asdict deep-copies every log line, ~0.4 ms per record on each save.
        "transactions": [vars(r) for r in records[-MAX_PERSISTED_RECORDS:]],
    }
    return json.dumps(state, separators=(",", ":"))


def load(path: Path) -> tuple[dict[str, Account], dict[str, Any], list[TxRecord]]:
    """(accounts, clock fields, records) saved in `path`."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        version = state.get("version") if isinstance(state, dict) else None
        if isinstance(version, int) and 0 < version < STATE_VERSION:
            raise ValueError(
                f"it was made by an older version of yield (chain format {version}, now {STATE_VERSION}: "
                "the sandbox strategy now keeps deposits with its own on-chain program)"
            )
        if version != STATE_VERSION:
            raise ValueError(f"unknown state version {version!r}")
        accounts = {
            address: Account(
                int(raw["lamports"]),
                base64.b64decode(raw["data"]),
                Pubkey.from_string(raw["owner"]),
                bool(raw["executable"]),
                int(raw["rent_epoch"]),
            )
            for address, raw in state["accounts"].items()
        }
        clock = dict(state["clock"])
        if (
            not isinstance(clock.get("genesis"), str)
            or type(clock.get("slot")) is not int
            or type(clock.get("started_ms")) is not int
        ):
            raise ValueError("damaged clock")
        records = [TxRecord(**raw) for raw in state.get("transactions", [])]
        return accounts, clock, records
    except (OSError, ValueError, KeyError, TypeError) as exc:
        reason = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise ConfigError(
            f"cannot restore the sandbox chain from {path}: {reason}",
            hint="run `yield sandbox reset` to start the sandbox afresh",
        ) from None
