"""Output formats are objects in one registry (`formats.FORMATS`), and each resource kind is one
descriptor (`cli/resources.py`): what completion offers, when errors are also JSON, which CSV
columns and which parser a kind has, all come from there."""

from __future__ import annotations

import ast
import io
from pathlib import Path

from yieldcli.api.pagination import PageResult
from yieldcli.cli import app, completion
from yieldcli.cli.render import formats
from yieldcli.cli.render.amount_fields import columns_with_amounts
from yieldcli.cli.render.output import Output
from yieldcli.cli.resources import RESOURCES
from yieldcli.environment import Environment

CLI = Path(app.__file__).parent


def test_completion_offers_the_registrys_modes():
    assert completion.OPTION_VALUES["-o"] is formats.MODES and completion.OPTION_VALUES["--output"] is formats.MODES
    assert completion.SETTING_VALUES["output"] is formats.MODES
    assert formats.MODES == ("table", "json", "ndjson", "csv")


def test_the_error_writer_asks_the_format_not_its_name(monkeypatch):
    class Yaml(formats.Format):
        name = "yaml"
        errors_as_json = True

    monkeypatch.setitem(formats.FORMATS, "yaml", Yaml())
    assert app._errors_as_json(["positions", "-o", "yaml"])
    assert app._errors_as_json(["--output=ndjson"]) and app._errors_as_json(["--json"])
    assert not app._errors_as_json(["-o", "csv"]) and not app._errors_as_json(["-o", "table"])


def test_no_mode_is_named_outside_the_registry():
    for path in (CLI / "app.py", CLI / "completion.py", CLI / "render" / "output.py", CLI / "flags.py"):
        names = {
            node.value
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and node.value in ("ndjson", "csv")
        }
        assert names == set(), f"{path.name} names {names}"


def _page(kind: str, items: list[dict]) -> PageResult:
    return PageResult(
        kind, [(item, RESOURCES[kind].model()(item, i)) for i, item in enumerate(items)], lambda: {"total": len(items)}
    )


def _written(mode: str, result: PageResult) -> str:
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(), vars={})
    Output(env, mode, color=False).page(result)
    return env.stdout.getvalue()


BALANCE = {
    "token_address": "So11111111111111111111111111111111111111112",
    "token_symbol": "SOL",
    "token_name": "Solana",
    "decimals": 9,
    "total_balance": 5,
    "yield_balance": None,
}


def test_a_kinds_csv_columns_and_parser_are_its_descriptors():
    header = _written("csv", _page("balances", [BALANCE])).splitlines()[0]
    assert tuple(header.split(",")) == columns_with_amounts("balances", RESOURCES["balances"].columns)
    assert {"positions", "balances", "earnings", "strategy"} <= set(RESOURCES)


def test_each_format_writes_the_same_page_its_own_way():
    result = lambda: _page("balances", [BALANCE, {**BALANCE, "total_balance": 7}])  # noqa: E731
    assert _written("json", result()).startswith('{"data": [{"token_address"')
    assert [line[-1:] for line in _written("ndjson", result()).splitlines()] == ["}", "}"]
    assert len(_written("csv", result()).splitlines()) == 3
