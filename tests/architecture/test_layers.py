"""The layers of the package, checked on the source with `ast`.

- nothing outside `yieldcli/cli/` (the library: everything a Python user may import) imports the
  command line (`yieldcli.cli`, typer, rich, click);
- `cli/render/` does not import `api/`; `sandbox/` and `solana/` do not import the client's `chain/`;
- `solana/` is shared by both sides and imports neither;
- `mcp/` (the agent server) never imports the command line; nothing but `mcp/` and the command
  that starts it (`cli/commands/mcp_cmd.py`) imports the `mcp` SDK, so no other command loads it.
An import under `if TYPE_CHECKING:` names a type for annotations and is not run: it is not a
dependency and is not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "yieldcli"
# Everything only the command line needs lives under yieldcli.cli; nothing outside it imports it.
CLI = ("yieldcli.cli", "typer", "rich", "click")

LIBRARY = tuple(
    f"yieldcli.{path.stem}" if path.is_file() else f"yieldcli.{path.name}"
    for path in PACKAGE.iterdir()
    if path.name not in ("cli", "__main__.py", "__pycache__")
    and (path.suffix == ".py" or (path / "__init__.py").exists())
)

# (the modules a rule is about, what they must not import)
RULES: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    (LIBRARY, CLI),
    (("yieldcli.cli.render",), ("yieldcli.api",)),
    (("yieldcli.sandbox",), ("yieldcli.chain", "yieldcli.cli.commands", "yieldcli.cli.render", "yieldcli.cli.session")),
    (("yieldcli.solana",), ("yieldcli.chain", "yieldcli.sandbox", "yieldcli.api")),
    (("yieldcli.mcp",), CLI),
]
# Who may import the `mcp` SDK (and the modules of ours that import it at their top).
MCP_SDK = (
    "mcp",
    "yieldcli.mcp.server",
    "yieldcli.mcp.reads",
    "yieldcli.mcp.writes",
    "yieldcli.mcp.approvals",
    "yieldcli.mcp.results",
)
MCP_SDK_USERS = ("yieldcli.mcp", "yieldcli.cli.commands.mcp_cmd")


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def runtime_imports(path: Path, *, types_too: bool = False) -> set[str]:
    """Every module `path` imports when it runs (anywhere: lazy imports inside functions count);
    `types_too`: and the ones under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text())
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if not types_too and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            # `from yieldcli import chain` imports yieldcli.chain
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=module_name)
def test_every_module_keeps_to_its_layer(path):
    name = module_name(path)
    for scope, forbidden in RULES:
        if under(name, scope):
            bad = {m for m in runtime_imports(path) if under(m, forbidden)}
            assert not bad, f"{name} imports {sorted(bad)}"


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=module_name)
def test_only_the_mcp_command_imports_the_mcp_sdk(path):
    name = module_name(path)
    if not under(name, MCP_SDK_USERS):
        bad = {m for m in runtime_imports(path) if under(m, MCP_SDK)}
        assert not bad, f"{name} imports {sorted(bad)}"


def test_the_checker_counts_lazy_imports_and_not_type_only_ones(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from yieldcli.api import models\n"
        "def f():\n    from yieldcli.cli import session\n"
    )
    found = runtime_imports(probe)
    assert "yieldcli.cli.session" in found
    assert not any(under(m, ("yieldcli.api",)) for m in found)


def test_the_faces_write_through_the_client_and_never_drive_the_pipeline():
    # The command line and the agent server write through `Client` (`transact`, `prepare_action`, the
    # prepared transaction's `.sign`/`.send`); what a terminal needs reaches the pipeline as the
    # library's hooks. Neither imports the pipeline, not even for a type.
    pipeline = {path.name for path in (PACKAGE / "chain" / "transact").glob("*.py")}
    assert {"engine.py", "checks.py", "broadcast.py", "outcomes.py"} <= pipeline
    faces = [*(PACKAGE / "cli").rglob("*.py"), *(PACKAGE / "mcp").rglob("*.py")]
    driving = {
        str(path.relative_to(PACKAGE)): sorted(
            name for name in runtime_imports(path, types_too=True) if name.startswith("yieldcli.chain.transact")
        )
        for path in faces
    }
    assert {path: names for path, names in driving.items() if names} == {}


LIBRARY_MODULES = sorted(
    [
        PACKAGE / "__init__.py",
        *PACKAGE.joinpath("client").rglob("*.py"),
        *PACKAGE.joinpath("api").rglob("*.py"),
        *PACKAGE.joinpath("chain").rglob("*.py"),
        *PACKAGE.joinpath("solana").rglob("*.py"),
    ]
)


def test_the_librarys_messages_name_no_flag_and_no_command():
    # A library user has no `--send` to add and no `yield tx status` to run: cli_errors adds those hints.
    import re

    for path in LIBRARY_MODULES:
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
        }
        texts = [
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        ]
        bad = [text for text in texts if re.search(r"(^|\s)--[a-z]|`yield ", text)]
        assert not bad, f"{path.name}: {bad}"
