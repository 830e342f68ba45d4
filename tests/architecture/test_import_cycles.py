"""No import circles in the package: the arrows between modules run one way.

Read on the source with `ast`, as the layer test does: every import a module makes is an arrow to the
package's module it names: lazy ones inside functions count, and so do `if TYPE_CHECKING:` ones (a
type named across a circle is two-way knowledge all the same).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.test_layers import PACKAGE, module_name


def _modules() -> dict[str, Path]:
    return {module_name(path).removesuffix(".__init__"): path for path in PACKAGE.rglob("*.py")}


def _arrows(path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules `path` imports. `from yieldcli.chain.tx import nonce` is an arrow to
    yieldcli.chain.tx.nonce only: its package's `__init__` runs first, as for any import of a module
    inside it, and is no dependency of its own; `from yieldcli import Client` is an arrow to yieldcli."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(_known(alias.name, modules) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                inner = f"{node.module}.{alias.name}"
                found.add(inner if inner in modules else _known(node.module, modules))
    return {name for name in found if name.startswith("yieldcli")} - {module_name(path).removesuffix(".__init__")}


def _known(name: str, modules: dict[str, Path]) -> str:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), and modules importing themselves."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_of_the_package_imports_itself_round_a_circle():
    modules = _modules()
    graph = {name: _arrows(path, modules) for name, path in modules.items()}
    assert circles(graph) == []


# The chain's packages by concern, lowest first: each may import only the ones before it (and `keys`
# stands beside `fees` and `guard`: it signs what `tx` describes).
CHAIN_ORDER = ("rpc", "tx", "fees", "keys", "guard", "transact")


def test_the_chains_packages_import_one_way():
    modules = _modules()
    backwards = set()
    for name, path in modules.items():
        parts = name.split(".")
        if len(parts) < 4 or parts[:2] != ["yieldcli", "chain"]:
            continue
        for target in _arrows(path, modules):
            aim = target.split(".")
            inside = len(aim) >= 3 and aim[:2] == ["yieldcli", "chain"] and aim[2] != parts[2]
            if inside and CHAIN_ORDER.index(aim[2]) > CHAIN_ORDER.index(parts[2]):
                backwards.add(f"{name} -> {target}")
    assert backwards == set()


def test_the_circle_finder_finds_a_circle_and_nothing_else():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


# What the guard may stand on: the chain's reading and decoding below it, and the package's small pure
# modules. Nothing that sends, signs for the user, drives the pipeline or faces a person.
GUARD = "yieldcli.chain.guard"
ABOVE_THE_GUARD = (
    "yieldcli.chain.transact",
    "yieldcli.chain.keys",
    "yieldcli.client",
    "yieldcli.api",
    "yieldcli.cli",
    "yieldcli.mcp",
    "yieldcli.sandbox",
)


def test_the_guard_is_a_package_of_its_own_with_no_circle_even_in_its_type_imports():
    modules = _modules()
    guard = {name: path for name, path in modules.items() if name == GUARD or name.startswith(GUARD + ".")}
    assert len(guard) >= 10
    graph = {name: _arrows(path, modules) & set(guard) for name, path in guard.items()}
    assert circles(graph) == []
    above = {
        (name, target)
        for name, path in guard.items()
        for target in _arrows(path, modules)
        if target.startswith(ABOVE_THE_GUARD)
    }
    assert above == set()
