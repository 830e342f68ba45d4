"""Imports inside functions only where start-up time needs them (docs/architecture.md, "Imports inside
functions"). A function-level import of X in module M must have one of these reasons:

(a) heavy: importing X at M's top would load a heavy module (HEAVY: measured below) that M's own
    top-level imports do not load already;
(b) circle: X's top-level imports reach M, so importing X at M's top would close a circle;
(c) start-up: M is loaded on a start-up path (`start_up_paths`: `import yieldcli`, a cold read
    with the Client, `yield --version`, `yield --help` and each command's, completion, the reads)
    that does not load X's top-level imports: at M's top they would slow that path down;
(d) ALLOWED: a short list below, each with its reason.

(a) and (b) are read statically from the package's top-level import graph (`if TYPE_CHECKING:`
imports excluded: they never run). (c) is measured: each start-up path is run once against a sandbox
served on loopback, and the modules it has loaded when it ends are compared with what X would add.
Anything else is a needless function-level import: it goes to the top.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import TEST_API_KEY, YIELD, serve_sandbox
from yieldcli.cli.app import every_command
from yieldcli.sandbox.demo import DEMO_STRATEGY_ID, DEMO_WALLET

PACKAGE = Path(__file__).resolve().parents[2] / "yieldcli"

# Heavy modules, by their own import time in a fresh interpreter (`python -X importtime -c 'import X'`,
# cumulative, best of 5; Python 3.11, Linux x86-64; docs/architecture.md has the table): 3 ms or more.
# A name covers its submodules.
HEAVY = {
    "mcp": 586,  # the agent server's SDK
    "solana": 179,  # solana.rpc.async_api; solana.rpc.commitment alone 3
    "pydantic": 119,
    "httpx2": 71,
    "uvicorn": 65,
    "keyring": 60,
    "rich": 30,  # rich.console; rich.progress 49
    "asyncio": 36,
    "typer": 33,
    "click": 19,
    "importlib.metadata": 26,
    "urllib.request": 24,
    "solders": 22,
    "msgspec": 19,
    "http.client": 19,
    "truststore": 16,
    "ssl": 9,
    "email": 9,  # email.utils
    "tomllib": 7,
    "concurrent.futures": 7,
    "inspect": 6,
    "logging": 6,
    "secrets": 5,
    "subprocess": 4,
    "tempfile": 4,
    "zoneinfo": 4,
    "jq": 3,
    "socket": 3,
}

# (module, the module it imports inside a function): why, when no rule above says so.
ALLOWED: dict[tuple[str, str], str] = {
    # A Ledger's signing code (7 ms): loaded when a Ledger signs, not on every write with a key file.
    (
        "yieldcli.chain.transact.engine",
        "yieldcli.chain.keys.ledger.signer",
    ): "a Ledger's message hash, only when one signs",
    ("yieldcli.chain.keys.keypairs", "yieldcli.chain.keys.ledger.signer"): "a Ledger's signer, only for a Ledger URL",
    # The service's models and pages (12 ms): a write draws the position with them only once it landed.
    ("yieldcli.cli.writing.report", "yieldcli.api.models"): "the position drawn after a confirmed send",
    ("yieldcli.cli.writing.report", "yieldcli.api.pagination"): "the position drawn after a confirmed send",
}


# ---- the package's imports, read with ast ------------------------------------------------------------


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


@dataclass(frozen=True)
class Import:
    module: str  # where the statement is
    line: int
    function: str | None  # None: at the module's top (run when the module is imported)
    text: str
    names: tuple[str, ...]  # every module the statement imports, its packages included


def _is_module(name: str) -> bool:
    if name in MODULES:
        return True
    if name.startswith("yieldcli"):
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError, AttributeError):
        return False


@cache
def _exports(package: str) -> dict[str, str]:
    """A package's names loaded on first use (PEP 562: `_EXPORTS`, name -> module, read by `__getattr__`)."""
    if package not in MODULES:
        return {}
    for node in ast.parse(MODULES[package].read_text()).body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["_EXPORTS"]:
            return ast.literal_eval(node.value)
    return {}


def _names(node: ast.Import | ast.ImportFrom, module: str) -> tuple[str, ...]:
    if isinstance(node, ast.Import):
        dotted = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative: from the package of `module` (a package's __init__ is its own)
            package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
            parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            base = f"{parent}.{base}" if base else parent
        # `from yieldcli import tokens` and `from importlib import metadata` import a module each;
        # `from yieldcli import Client` imports yieldcli.client.clients (the package's __getattr__ does)
        dotted = [base]
        dotted += [f"{base}.{alias.name}" for alias in node.names if _is_module(f"{base}.{alias.name}")]
        dotted += [_exports(base)[alias.name] for alias in node.names if alias.name in _exports(base)]
    found = []
    for name in dotted:
        parts = name.split(".")
        found += [".".join(parts[:n]) for n in range(1, len(parts) + 1)]
    return tuple(dict.fromkeys(found))


def imports_in(source: str, module: str) -> Iterator[Import]:
    """Every import statement that runs, with the function it is in (`if TYPE_CHECKING:` ones never run)."""

    def walk(node: ast.AST, function: str | None) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for statement in child.orelse:
                    yield from walk_one(statement, function)
            else:
                yield from walk_one(child, function)

    def walk_one(node: ast.AST, function: str | None) -> Iterator[Import]:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield Import(module, node.lineno, function, ast.unparse(node), _names(node, module))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from walk(node, function or getattr(node, "name", "<lambda>"))
        else:
            yield from walk(node, function)

    yield from walk(ast.parse(source), None)


@cache
def imports_of(module: str) -> tuple[Import, ...]:
    return tuple(imports_in(MODULES[module].read_text(), module))


def function_imports() -> list[Import]:
    return [i for module in MODULES for i in imports_of(module) if i.function is not None]


@cache
def closure(name: str) -> frozenset[str]:
    """What importing `name` runs: its packages, and everything their and its top-level imports reach
    (the package's modules followed, other modules by name only)."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        parts = current.split(".")
        todo += [".".join(parts[:n]) for n in range(1, len(parts))]
        if current in MODULES:
            todo += [n for i in imports_of(current) if i.function is None for n in i.names]
    return frozenset(seen)


def heavy(name: str) -> bool:
    return any(name == h or name.startswith(h + ".") for h in HEAVY)


def added_by(statement: Import) -> frozenset[str]:
    """What moving `statement` to the top of its module would make importing that module load."""
    reach = frozenset().union(*(closure(n) for n in statement.names))
    return reach - closure(statement.module)


def static_reasons(statement: Import) -> list[str]:
    reasons = []
    if heavy_added := sorted(n for n in added_by(statement) if heavy(n)):
        reasons.append(f"heavy: {', '.join(heavy_added)}")
    if any(statement.module in closure(n) for n in statement.names):
        reasons.append("circle")
    return reasons


# ---- the start-up paths, measured --------------------------------------------------------------------
# Each path runs with `python -S` and the package and its dependencies on PYTHONPATH: as from a wheel.
# The site module would run the editable install's finder, which imports pathlib, re, ipaddress,
# urllib.parse and more before the program starts, and hide what the program itself loads.
SEARCH_PATH = os.pathsep.join(
    dict.fromkeys([str(PACKAGE.parent), *(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))])
)


# Runs a command and writes the names in sys.modules when it ends. Not `-X importtime`, which misses
# what importlib.import_module loads (the command modules of cli/app.py's table, yieldcli's exports).
PROBE = """import atexit, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(" ".join(sys.modules)))
if sys.argv[1] == "-c":
    source, name = sys.argv.pop(2), "<string>"
else:
    name = sys.argv[1]
    source = open(name).read()
del sys.argv[0]
exec(compile(source, name, "exec"), {"__name__": "__main__"})
"""


def loaded_by(command: list[str], env: dict[str, str], out: Path) -> frozenset[str]:
    """The modules a process has loaded when it ends (but the probe's own atexit)."""
    env = {**env, "PYTHONPATH": SEARCH_PATH}
    done = subprocess.run(
        [sys.executable, "-S", "-c", PROBE, str(out), *command], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, (command, done.stderr[-2000:])
    return frozenset(out.read_text().split()) - {"atexit"}


LIBRARY_READ = (
    "import sys\nfrom yieldcli import Client\n"
    "with Client(sys.argv[1], sys.argv[2]) as c:\n    print(c.strategy(sys.argv[3]).strategy_name)"
)


def start_up_paths(url: str) -> dict[str, list[str]]:
    """The commands (`yield` is its console script, which imports re and sys first, as pip writes it)."""
    return {
        "import yieldcli": ["-c", "import yieldcli"],
        "from yieldcli import Client": ["-c", "from yieldcli import Client"],
        "Client(...).strategy(ID)": ["-c", LIBRARY_READ, url, TEST_API_KEY, DEMO_STRATEGY_ID],
        "yield --version": [YIELD, "--version"],
        "yield --version -v": [YIELD, "--version", "-v"],
        "yield --help": [YIELD, "--help"],
        "yield strategy info -o json": [YIELD, "strategy", "info", DEMO_STRATEGY_ID, "-o", "json"],
        "yield positions": [YIELD, "positions", DEMO_WALLET],
        "yield positions -o csv": [YIELD, "positions", DEMO_WALLET, "-o", "csv"],
        "yield balances -o ndjson": [YIELD, "balances", DEMO_WALLET, "-o", "ndjson"],
        "yield earnings -o json": [YIELD, "earnings", DEMO_WALLET, "-o", "json"],
        "yield health": [YIELD, "health"],
        "yield config show": [YIELD, "config", "show"],
        # Each command's help: its module loaded, nothing run.
        **{f"yield {name} --help": [YIELD, name, "--help"] for name in every_command()},
    }


@pytest.fixture(scope="module")
def start_up(tmp_path_factory) -> dict[str, frozenset[str]]:
    """Each start-up path's modules, run against the sandbox served on loopback."""
    home = tmp_path_factory.mktemp("lazy-imports")
    server = serve_sandbox(home / "sandbox")
    env = {k: v for k, v in os.environ.items() if not k.startswith("YIELD_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        NO_COLOR="1",
        YIELD_API_URL=server.url,
        YIELD_API_KEY=TEST_API_KEY,
        YIELD_STRATEGY=DEMO_STRATEGY_ID,
    )
    try:
        out = home / "modules"
        paths = {name: loaded_by(command, env, out) for name, command in start_up_paths(server.url).items()}
        completion = {**env, "_YIELD_COMPLETE": "complete_bash", "COMP_WORDS": "yield pos", "COMP_CWORD": "1"}
        paths["completion (yield pos<Tab>)"] = loaded_by([YIELD], completion, out)
    finally:
        server.stop()
    return paths


def start_up_reasons(statement: Import, paths: dict[str, frozenset[str]]) -> list[str]:
    """The start-up paths that load the statement's module but not what it imports (nor what that imports)."""
    wanted = {n for n in added_by(statement) if n in MODULES or _is_module(n)}
    return [f"start-up: {name}" for name, loaded in paths.items() if statement.module in loaded and wanted - loaded]


def reasons(statement: Import, paths: dict[str, frozenset[str]]) -> list[str]:
    found = static_reasons(statement) + start_up_reasons(statement, paths)
    found += [f"allowed: {ALLOWED[key]}" for key in ((statement.module, n) for n in statement.names) if key in ALLOWED]
    return found


# ---- the rule ------------------------------------------------------------------------------------------


def test_every_function_level_import_has_a_reason(start_up):
    needless = [i for i in function_imports() if not reasons(i, start_up)]
    assert not needless, "imports inside functions with no start-up reason: move them to the module's top\n" + (
        "\n".join(
            f"  {MODULES[i.module].relative_to(PACKAGE.parent)}:{i.line} in {i.function}(): {i.text}" for i in needless
        )
    )


def test_help_loads_no_heavy_module_a_read_does_not(start_up):
    # `yield --help` loads every command's module to list them: a heavy import at one's top (asyncio
    # in `nonce`'s, 22 ms) slowed every help page, and nothing but the bench saw it.
    def heavy_names(path: str) -> set[str]:
        return {h for m in start_up[path] for h in HEAVY if m == h or m.startswith(h + ".")}

    extra = sorted(heavy_names("yield --help") - heavy_names("yield strategy info -o json"))
    assert not extra, f"yield --help loads heavy modules a read does not: {extra}"


def test_the_allowed_list_names_imports_that_exist_and_need_it(start_up):
    for (module, name), why in ALLOWED.items():
        found = [i for i in function_imports() if i.module == module and name in i.names]
        assert found and why, (module, name)
        assert not (static_reasons(found[0]) + start_up_reasons(found[0], start_up)), f"{module}: {name} needs no entry"


def test_heavy_names_are_modules():
    # A misspelt name would let an import of anything by that name through.
    missing = [name for name in HEAVY if not _is_module(name)]
    assert not missing


def test_the_rule_tells_a_needless_import_from_a_needed_one(start_up):
    def statement(module: str, source: str) -> Import:
        return next(imports_in(f"def f():\n    {source}\n", module))

    # chain/transact/engine.py loads the errors at its top already, and is on no start-up path
    assert not reasons(statement("yieldcli.chain.transact.engine", "from yieldcli.errors import Refused"), start_up)
    assert statement("yieldcli.chain.transact.engine", "from ...errors import Refused").names == (
        "yieldcli",
        "yieldcli.errors",
    )
    # solana-py is heavy and chain/rpc/adapter.py's top does not load it
    assert static_reasons(statement("yieldcli.chain.rpc.adapter", "from solana.rpc.async_api import AsyncClient"))
    # the entry point keeps the whole command line off `yield --version`
    assert "start-up: yield --version" in reasons(
        statement("yieldcli.cli.entry", "from yieldcli.cli import app"), start_up
    )
    # a type-only import is not a function-level import, and neither is one at the module's top
    source = "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    import solders\nimport json\ndef f():\n    import os\n"
    assert [(i.text, i.function) for i in imports_in(source, "m")] == [("import json", None), ("import os", "f")]
