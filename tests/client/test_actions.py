"""An action is a row (`yieldcli/client/actions.py`) and every face dispatches on rows.

A copy of the package gets one new row, a `top-up` (a deposit under its own name, posted to the
service's /deposit): with that one edit it is a command (`yield top-up`), a Python method
(`Client.prepare_action("top-up")`), an agent tool (`prepare_top_up`) and an `--expect` spelling
(`top-up:USDC:1`), each run against the sandbox served over loopback and checked by the guard as the
deposit it is. An action no row names is refused on every face, and no code outside the rows (and the
guard's kinds) asks an action's name.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from mcp.client.stdio import StdioServerParameters

from tests.conftest import TEST_API_KEY, _chain_env, usdc_position, write_keypair
from tests.mcp.harness import POLICY, server_env, structured, write_private
from tests.mcp.harness import run as run_async
from yieldcli import Client, UsageError
from yieldcli.client.actions import ACTIONS
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, demo_keypair

PACKAGE = Path(__file__).resolve().parents[2] / "yieldcli"
UNIT = 1_000_000  # 1 USDC in base units

# The whole of a new action: one row, in one file.
ROW = """
TOP_UP = Action(
    "top-up",
    "top-up",
    "deposit",
    "/deposit",
    DEPOSIT.fields,
    "Top up a position.",
    "Propose topping up the position in `asset` by `amount` token units.",
)
ACTIONS[TOP_UP.name] = TOP_UP
"""

CLIENT = """
import json, sys
from yieldcli import Client
api_url, api_key, strategy, rpc_url, keypair, journal = sys.argv[1:]
with Client(api_url=api_url, api_key=api_key, strategy=strategy, rpc_url=rpc_url, keypair=keypair,
            journal_path=journal) as client:
    prepared = client.prepare_action("top-up", "USDC", "1")
    outcome = prepared.send(confirm=lambda text, p: print(text) or True)
    print(json.dumps({"differences": prepared.effect.differences, "status": type(outcome).__name__}))
"""


def _with_top_up(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(PACKAGE, root / "yieldcli", ignore=shutil.ignore_patterns("__pycache__"))
    rows = root / "yieldcli" / "client" / "actions.py"
    old = "\n\ndef action_named("
    text = rows.read_text()
    assert text.count(old) == 1, "actions.py no longer ends its rows before action_named"
    rows.write_text(text.replace(old, ROW + old))
    changed = [
        p.relative_to(root)
        for p in (root / "yieldcli").rglob("*.py")
        if p.read_bytes() != (PACKAGE / p.relative_to(root / "yieldcli")).read_bytes()
    ]
    assert changed == [Path("yieldcli/client/actions.py")]
    return root


@pytest.mark.process  # the copy of the package is found through PYTHONPATH, which only a new interpreter reads
def test_a_new_action_is_one_row_and_runs_on_every_face(sandbox, run, tmp_path):
    copy = _with_top_up(tmp_path)
    keypair = write_keypair(tmp_path / "demo.json", demo_keypair())
    pythonpath = os.pathsep.join([str(copy), os.environ.get("PYTHONPATH", "")])
    env = {**_chain_env(sandbox, keypair), "PYTHONPATH": pythonpath}

    def chain(*args: str):
        return run(*args, env=env)

    before = usdc_position(chain)
    # The command line: a command of its own, with the flags every write with an amount takes.
    assert "Top up a position." in chain("top-up", "--help").stdout
    cli = chain("top-up", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")
    assert cli.code == 0, cli.stderr
    body = cli.json()
    assert body["status"] == "confirmed" and body["effect"]["differences"] == []
    assert body["action"] == "top-up" and body["effect"]["expected"]["action"] == "deposit"
    assert usdc_position(chain) == before + UNIT

    # `tx sign --expect`: its spelling from the row; a deposit of 1 USDC signed as a top-up of 1.
    made = chain("deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    assert made.code == 0, made.stderr
    (tmp_path / "made.b64").write_text(made.json()["transaction"])
    signed = chain("tx", "sign", str(tmp_path / "made.b64"), "--expect", "top-up:USDC:1", "--yes", "-o", "json")
    assert signed.code == 0 and signed.json()["effect"]["differences"] == [], signed.stderr
    wrong = chain("tx", "sign", str(tmp_path / "made.b64"), "--expect", "top-up:USDC:2", "--yes", "-o", "json")
    assert wrong.code == 10, wrong.stderr  # the same row's amount, checked: 1 was built, 2 stated

    # The library of the same copy: the write by its name, asked and checked the same way.
    args = [sandbox.url, TEST_API_KEY, DEMO_STRATEGY_ID, sandbox.rpc_url, keypair, str(tmp_path / "journal.json")]
    proc = subprocess.run(
        [sys.executable, "-c", CLIENT, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=tmp_path,  # `python -c` looks in its folder first: not the checkout's package
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    question, answer = proc.stdout.splitlines()[-2:]
    assert question.startswith("Sign and send this top-up? (valid for about ")
    assert json.loads(answer) == {"differences": [], "status": "Confirmed"}
    assert usdc_position(chain) == before + 2 * UNIT

    # The agent server of the same copy: a prepare_top_up tool, allowed by the policy by its name.
    home = tmp_path / "agent"
    policy = write_private(home / "policy.toml", POLICY.replace('"close-account"]', '"close-account", "top-up"]'))
    agent_env = {**server_env(sandbox, home), "PYTHONPATH": pythonpath}
    server = StdioServerParameters(command=sys.executable, args=["-m", "yieldcli", "mcp", "--policy", str(policy)])
    server.env, server.cwd = agent_env, str(tmp_path)

    async def agent():
        from mcp import Client as McpClient

        async with McpClient(server, read_timeout_seconds=120) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools["prepare_top_up"].input_schema["properties"]) == {"asset", "amount"}
            proposal = structured(await client.call_tool("prepare_top_up", {"asset": "USDC", "amount": "1"}))
            assert proposal["policy"]["verdict"] == "auto" and proposal["amount"]["base_units"] == "1000000"
            return structured(await client.call_tool("execute", {"proposal_id": proposal["proposal_id"]}))

    outcome = run_async(agent)
    assert outcome["status"] == "confirmed", outcome
    assert usdc_position(chain) == before + 3 * UNIT


def test_an_action_no_row_names_is_refused_on_every_face(chain, sandbox, tmp_path):
    # The command line: no such command, and no such --expect spelling (the known ones listed).
    assert chain("top-up", "--asset", "USDC", "--amount", "1").code == 2
    made = chain("deposit", "--asset", "USDC", "--amount", "1", "-o", "json")
    (tmp_path / "made.b64").write_text(made.json()["transaction"])
    stated = chain("tx", "sign", str(tmp_path / "made.b64"), "--expect", "swap:USDC:1", "--yes")
    assert stated.code == 2 and "deposit:ASSET:AMOUNT" in stated.stderr, stated.stderr
    # Python: by name, or as a transaction said to do it; nothing is asked of the service.
    with Client(sandbox.url, TEST_API_KEY, strategy=DEMO_STRATEGY_ID, rpc_url=sandbox.rpc_url) as client:
        for refused in (
            lambda: client.prepare_action("swap", "USDC", Decimal("1")),
            lambda: client.prepare_transaction(made.json()["transaction"], "swap", asset="USDC"),
        ):
            with pytest.raises(UsageError) as error:
                refused()
            assert (
                error.value.kind == "usage.action.unknown" and "deposit, withdraw, close-account" in error.value.message
            )
    # The agent server: a policy that allows an action no row names is refused when it is read.
    from yieldcli.errors import ConfigError
    from yieldcli.mcp.policy import load_policy

    bad = write_private(tmp_path / "policy" / "bad.toml", POLICY.replace('"close-account"]', '"swap"]'))
    with pytest.raises(ConfigError, match="actions must be a list of deposit, withdraw, close-account"):
        load_policy(bad, required=True)
    # The guard: a kind it does not know is an error, never checked as another.
    from yieldcli.chain.guard.kinds import kind_named

    with pytest.raises(UsageError):
        kind_named("swap")


# Where an action's name may be compared: the rows, the guard's kinds, and the strategy layouts and
# the sandbox (which speak the strategy program's instruction names, not an action's).
ROWS = {"client/actions.py"}
NAMES = {"deposit", "withdraw", "close-account", "transaction", "top-up"}


def _compared_names(path: Path, root: Path = PACKAGE) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        for side in (node.left, *node.comparators):
            values = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            found += [
                f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}"
                for value in values
                if isinstance(value, ast.Constant) and value.value in NAMES
            ]
    return found


def test_no_code_outside_the_rows_compares_an_actions_name():
    allowed = {"sandbox", "strategies"}
    found = [
        line
        for path in sorted(PACKAGE.rglob("*.py"))
        if str(path.relative_to(PACKAGE)) not in ROWS and not set(path.relative_to(PACKAGE).parts) & allowed
        for line in _compared_names(path)
    ]
    assert found == []


def test_the_rule_sees_a_comparison_of_an_actions_name(tmp_path):
    # The rule above is only as good as what it finds: a fall-through written the old way is found.
    written = tmp_path / "writes.py"
    written.write_text('if action == "withdraw" or kind in ("deposit", "close-account"):\n    pass\n')
    found = [line.split(": ", 1)[1] for line in _compared_names(written, tmp_path)]
    assert found == ["action == 'withdraw'", "kind in ('deposit', 'close-account')"] + [
        "kind in ('deposit', 'close-account')"
    ]


def test_every_row_is_complete_and_its_kind_is_the_guards():
    from yieldcli.chain.guard.kinds import KINDS

    for row in ACTIONS.values():
        assert row.kind in KINDS and KINDS[row.kind].asset, row.name
        assert row.service_path.startswith("/") and {"wallet", "payer", "mint"} <= set(row.field), row.name
        assert ("amount" in row.field) == row.amount, row.name
        assert row.help and row.proposes and row.noun, row.name
