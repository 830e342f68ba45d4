"""Solana JSON-RPC 2.0 over loopback for the sandbox chain."""

from yieldcli.sandbox.rpc.server import RpcServer

__all__ = ["RpcServer"]
