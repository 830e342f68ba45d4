"""A new write action is a value with its own rows: adding one touches at most five files. A copy of
the package gets a throwaway `top-up` (a deposit under its own name, posted to the service's
/deposit), and it runs through `yield` and `Client` against the sandbox served over loopback, the
guard checking it as the deposit it is."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import _chain_env, usdc_position, write_keypair
from yieldcli.sandbox.demo import demo_keypair

PACKAGE = Path(__file__).resolve().parents[2] / "yieldcli"
UNIT = 1_000_000  # 1 USDC in base units

# file -> (text it has, the text that replaces it): the whole of a new action.
EDITS = {
    "chain/guard/actions.py": (
        "ACTIONS: dict[str, Action] = {a.name: a for a in (DEPOSIT, WITHDRAW, CLOSE)}",
        'TOP_UP = Action("top-up", "top-up", DEPOSIT.call, DEPOSIT.needed, DEPOSIT.effect, DEPOSIT.service_path,'
        ' DEPOSIT.fields, like="deposit")\n'
        "ACTIONS: dict[str, Action] = {a.name: a for a in (DEPOSIT, WITHDRAW, CLOSE, TOP_UP)}",
    ),
    "client/write_methods.py": (
        "    def withdraw(",
        "    def top_up(self, asset: str, amount: Decimal | str | None = None, **args: Unpack[MoveArgs]) -> P:\n"
        '        return self._move("top-up", asset, amount, dict(args), {})\n\n'
        "    def withdraw(",
    ),
    "cli/commands/write.py": (
        "@opt.with_tx_options()\ndef withdraw(",
        "@opt.with_tx_options()\n"
        "def top_up(ctx: typer.Context, asset: RequiredAsset = None, amount: AmountOpt = None, all_: AllOpt = False,"
        " raw: RawOpt = False, output: opt.Output = None, *, tx: 'TxOptions') -> None:\n"
        '    """Top up a position."""\n'
        "    session = session_of(ctx)\n"
        "    order = _transfer_order(session, tx, 'top-up', asset, amount, all_, raw, None, None, None, None)\n"
        "    _run_order(session, session.output(output), tx, order)\n\n\n"
        "@opt.with_tx_options()\ndef withdraw(",
    ),
    "cli/app.py": (
        '    "deposit": ("yieldcli.cli.commands.write", "deposit"),\n',
        '    "deposit": ("yieldcli.cli.commands.write", "deposit"),\n'
        '    "top-up": ("yieldcli.cli.commands.write", "top_up"),\n',
    ),
}

CLIENT = """
import json, sys
from yieldcli import Client
api_url, api_key, strategy, rpc_url, keypair, journal = sys.argv[1:]
with Client(api_url=api_url, api_key=api_key, strategy=strategy, rpc_url=rpc_url, keypair=keypair,
            journal_path=journal) as client:
    prepared = client.top_up("USDC", "1")
    outcome = prepared.send(confirm=lambda text, p: print(text) or True)
    print(json.dumps({"differences": prepared.effect.differences, "status": type(outcome).__name__}))
"""


def _with_top_up(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(PACKAGE, root / "yieldcli", ignore=shutil.ignore_patterns("__pycache__"))
    for name, (old, new) in EDITS.items():
        path = root / "yieldcli" / name
        text = path.read_text()
        assert text.count(old) == 1, f"{name} no longer has the place the new action goes"
        path.write_text(text.replace(old, new))
    return root


def test_a_new_write_action_touches_at_most_five_files_and_runs_on_both_faces(sandbox, run, tmp_path):
    assert len(EDITS) <= 5
    copy = _with_top_up(tmp_path)
    keypair = write_keypair(tmp_path / "demo.json", demo_keypair())
    env = {**_chain_env(sandbox, keypair), "PYTHONPATH": os.pathsep.join([str(copy), os.environ.get("PYTHONPATH", "")])}

    def chain(*args: str):
        return run(*args, env=env)

    before = usdc_position(chain)
    cli = chain("top-up", "--asset", "USDC", "--amount", "1", "--send", "--yes", "-o", "json")
    assert cli.code == 0, cli.stderr
    body = cli.json()
    assert body["status"] == "confirmed" and body["effect"]["differences"] == []
    assert body["action"] == "top-up" and body["effect"]["expected"]["action"] == "deposit"
    assert usdc_position(chain) == before + UNIT

    # The library of the same copy: its Client has the write too, asked and checked the same way.
    args = [sandbox.url, env["YIELD_API_KEY"], env["YIELD_STRATEGY"], sandbox.rpc_url, keypair]
    proc = subprocess.run(
        [sys.executable, "-c", CLIENT, *args, str(tmp_path / "journal.json")],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=tmp_path,  # `python -c` looks in its folder first: not the checkout's package
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    question, answer = proc.stdout.splitlines()[-2:]
    assert question == "Sign and send this top-up?"
    assert json.loads(answer) == {"differences": [], "status": "Confirmed"}
    assert usdc_position(chain) == before + 2 * UNIT
