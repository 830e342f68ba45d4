"""A second, independent client: the MCP Inspector's CLI mode (npm, installed by `npm ci --prefix
tests/js`) starts `yield mcp` over stdio, lists its tools and calls a read."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import YIELD
from tests.mcp.harness import server_env

INSPECTOR = Path(__file__).resolve().parents[1] / "js" / "node_modules" / ".bin" / "mcp-inspector"


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed: the Inspector cannot be")
def test_the_mcp_inspector_lists_the_tools_and_calls_a_read(sandbox, isolated):
    assert INSPECTOR.exists(), "run: npm ci --prefix tests/js --legacy-peer-deps"
    env = server_env(sandbox, isolated)

    def inspector(*args: str) -> dict:
        proc = subprocess.run(
            [str(INSPECTOR), "--cli", YIELD, "mcp", *args], env=env, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    tools = {tool["name"]: tool for tool in inspector("--method", "tools/list")["tools"]}
    assert {"strategy", "positions", "balances", "earnings", "health", "execute"} <= set(tools)
    assert tools["positions"]["annotations"]["readOnlyHint"] is True
    assert tools["execute"]["annotations"]["destructiveHint"] is True
    called = inspector("--method", "tools/call", "--tool-name", "positions", "--tool-arg", "asset=USDC")
    positions = called["structuredContent"]["positions"]
    assert [p["token_symbol"] for p in positions] == ["USDC"]
    assert positions[0]["total_position_value"] == "2547318402"
    assert positions[0]["total_position_value_ui_amount_string"] == "2547.318402"
