"""Solana side of `yield`: decode and review transactions, keypairs, signing, RPC adapter, confirmation.

Importable without the CLI. Modules import solders; only `rpc` talks to a chain and it imports
solana-py lazily, inside the functions that need it.
"""
