"""What `Client` and `AsyncClient` share above the wire: the default strategy, a read's query, the
health answer, and the chain settings a write resolves on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from yieldcli.api import models
from yieldcli.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from solders.keypair import Keypair

    from yieldcli.api.core import JSON
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.client.prepared import ChainSettings

DEFAULT_TIMEOUT = 30.0


class ReadDefaults:
    """What both clients share above the wire: defaults, queries and parsing."""

    def __init__(self, strategy: str | None, concurrency: int):
        self.strategy = strategy
        self.concurrency = concurrency

    def strategy_id(self, given: str | None) -> str:
        if given:
            return given
        if self.strategy:
            return self.strategy
        raise UsageError("no strategy: pass strategy=, or create the client with a default strategy")


class WriteSettings:
    """Where and as whom both clients sign and send: resolved at the first write (reads never load solders)."""

    def __init__(
        self,
        rpc_url: str | None,
        keypair: Signer | Keypair | str | Path | None,
        journal_path: str | Path | None,
        timeout: float,
        strategy_program: str | None = None,
        trust_file: str | Path | None = None,
        priority_fee: int | str | None = None,
        max_fee: int | None = None,
        *,
        resolved: ChainSettings | None = None,
    ):
        self._given = (rpc_url, keypair, journal_path, timeout, strategy_program, trust_file, priority_fee, max_fee)
        self._settings: ChainSettings | None = resolved  # given whole by a caller that resolved them (`over`)

    def settings(self, api_url: str) -> ChainSettings:
        if self._settings is None:
            from yieldcli.client.prepared import chain_settings

            rpc_url, keypair, journal_path, timeout, program, trust_file, price, max_fee = self._given
            if not rpc_url:
                raise UsageError("no Solana RPC: create the client with rpc_url=", kind="usage.no_rpc")
            self._settings = chain_settings(
                api_url, rpc_url, keypair, journal_path, timeout, program, trust_file, price, max_fee
            )
        return self._settings


def public_service_url() -> str:
    from yieldcli.config import DEFAULT_API_URL

    return DEFAULT_API_URL


def read_query(
    asset: str | None = None, sort_by: str | None = None, order: str | None = None, **more: str | int | None
) -> dict[str, str | int | None]:
    if order is not None and order not in ("asc", "desc"):
        raise UsageError(f"invalid order {order!r}: expected 'asc' or 'desc'")
    return {"asset": asset, "sort_by": sort_by, "sort_order": order, **more}


def health_text(body: JSON) -> str:
    if not isinstance(body, str):
        raise models.BodyError(f"the service answered the health check with {type(body).__name__}, not text")
    return body
