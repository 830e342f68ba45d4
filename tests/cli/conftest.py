"""Fixtures of the command line's tests against the sandbox's chain: `yield` signing as the demo wallet,
its environment for commands started in the background, and the intent tests' world (a stand-in
service in front of the sandbox)."""

from __future__ import annotations

import os

import pytest

from tests.cli.stand_in import World
from tests.conftest import TEST_API_KEY, write_keypair
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair


def _chain_env(sandbox, keypair: str) -> dict[str, str]:
    return {
        "YIELD_API_URL": sandbox.url,
        "YIELD_API_KEY": TEST_API_KEY,
        "YIELD_RPC_URL": sandbox.rpc_url,
        "YIELD_KEYPAIR": keypair,
        "YIELD_STRATEGY": DEMO_STRATEGY_ID,
    }


@pytest.fixture
def chain(sandbox, run, tmp_path):
    """`yield` pointed at the served sandbox's API and RPC, signing as the demo wallet."""
    keypair = write_keypair(tmp_path / "demo.json", demo_keypair())

    def _yield(*args, env=None, **kwargs):
        return run(*args, env={**_chain_env(sandbox, keypair), **(env or {})}, **kwargs)

    _yield.keypair = keypair
    return _yield


@pytest.fixture
def chain_env(sandbox, tmp_path):
    """The environment `chain` gives `yield`, for commands started in the background."""
    return {**os.environ, **_chain_env(sandbox, write_keypair(tmp_path / "bg-demo.json", demo_keypair()))}


@pytest.fixture
def world(sandbox, run, tmp_path):
    """The sandbox behind a stand-in service that rewrites the transactions it builds."""
    w = World(sandbox, run, tmp_path)
    yield w
    w.stand_in.stop()


def usdc_position(chain) -> int:
    """The demo wallet's USDC position in base units, read through `yield positions`."""
    body = chain("positions", "--asset", "USDC", "-o", "json").json()
    return sum(p["total_position_value"] for p in body["data"])
