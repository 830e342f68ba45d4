"""The sandbox's JSON-RPC server with the strategy's ledger kept in step with faucet answers."""

from __future__ import annotations

from typing import Any

from yieldcli.sandbox.rpc import RpcServer
from yieldcli.sandbox.strategy import StrategyChain


class StrategyRpcServer(RpcServer):
    """The JSON-RPC server, telling the ledger about airdrops and mints (they land without the confirmation hook)."""

    def __init__(self, chain: StrategyChain, host: str = "127.0.0.1", port: int = 0):
        self.chain = chain
        super().__init__(chain.runtime, host, port)

    def _request_airdrop(self, params: list[Any]) -> str:
        signature = super()._request_airdrop(params)
        self.chain.sync_wallets([str(params[0])])
        return signature

    def _mint_to(self, params: list[Any]) -> str:
        account = super()._mint_to(params)
        self.chain.sync_wallets([str(params[0])])
        return account
