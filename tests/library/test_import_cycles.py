"""No import circles in the package: the arrows between modules run one way.

Read on the source with `ast`, as the layer test does: every import a module runs (lazy ones inside
functions count; `if TYPE_CHECKING:` ones do not) is an arrow to the package's module it names.
"""

from __future__ import annotations

from pathlib import Path

from tests.library.test_layers import PACKAGE, module_name, runtime_imports


def _modules() -> dict[str, Path]:
    return {module_name(path).removesuffix(".__init__"): path for path in PACKAGE.rglob("*.py")}


def _arrows(path: Path, modules: dict[str, Path], *, types_too: bool = False) -> set[str]:
    """The package's modules `path` imports (`from yieldcli.chain import rpc` is yieldcli.chain.rpc.adapter)."""
    names = runtime_imports(path, types_too=types_too)
    found = set()
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name.startswith("yieldcli"):
            found.add(name)
    return found - {module_name(path).removesuffix(".__init__")}


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


def test_the_transaction_pipeline_runs_one_way_even_in_its_type_imports():
    # the engine drives checks and broadcast; they share the types of transact/types.py.
    modules = _modules()
    pipeline = {name: path for name, path in modules.items() if name.startswith("yieldcli.chain.transact.engine")}
    graph = {name: _arrows(path, modules, types_too=True) & set(pipeline) for name, path in pipeline.items()}
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle_and_nothing_else():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


# What the guard may stand on: the chain's reading and decoding below it, and the package's small pure
# modules. Nothing that sends, signs for the user, drives the pipeline or faces a person.
GUARD = "yieldcli.chain.guard"
ABOVE_THE_GUARD = (
    "yieldcli.chain.transact.engine",
    "yieldcli.chain.transact.journal",
    "yieldcli.chain.transact.confirm",
    "yieldcli.chain.transact.settle",
    "yieldcli.chain.keys.ledger",
    "yieldcli.client.clients",
    "yieldcli.client.orders",
    "yieldcli.api",
    "yieldcli.cli",
    "yieldcli.mcp",
    "yieldcli.sandbox",
)


def test_the_guard_is_a_package_of_its_own_with_no_circle_even_in_its_type_imports():
    modules = _modules()
    guard = {name: path for name, path in modules.items() if name == GUARD or name.startswith(GUARD + ".")}
    assert len(guard) >= 10
    graph = {name: _arrows(path, modules, types_too=True) & set(guard) for name, path in guard.items()}
    assert circles(graph) == []
    above = {
        (name, target)
        for name, path in guard.items()
        for target in _arrows(path, modules, types_too=True)
        if target.startswith(ABOVE_THE_GUARD)
    }
    assert above == set()
