"""The tests mirror the package (tests/README.md): a test of `yieldcli/a/b/c.py` is `tests/a/b/test_c.py`, or
`tests/a/b/test_c_<aspect>.py`; `tests/a/b/test_b[_<aspect>].py` is about the package `a/b` as a whole; the
architecture tests are in tests/architecture/. A test file anywhere else, or named for no module, fails here."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "yieldcli"
TESTS = ROOT / "tests"
# Folders of tests that mirror no package folder, each for a reason tests/README.md gives.
EXCEPTIONS = {"architecture"}
# Folders of the tests' own tools, with no test files in them.
NOT_TESTS = {"js"}
MODULE_SUFFIXES = {".py", ".c"}  # the package's modules: Python, and the sandbox program's C source


def files_of_tests() -> list[Path]:
    return sorted(
        path
        for path in TESTS.rglob("test_*.py")
        if not ({"node_modules", "__pycache__"} & set(path.parts)) and path.relative_to(TESTS).parts[0] not in NOT_TESTS
    )


def misplaced(test: Path, package: Path = PACKAGE, tests: Path = TESTS) -> str | None:
    """Why `test` does not mirror a module of `package` (None: it does)."""
    folder = test.parent.relative_to(tests)
    if folder.parts and folder.parts[0] in EXCEPTIONS:
        return None
    mirrored = package / folder
    if not mirrored.is_dir():
        return f"{folder.as_posix() or '.'}/ mirrors no folder of {package.name}/"
    names = {p.stem for p in mirrored.iterdir() if p.suffix in MODULE_SUFFIXES and p.stem != "__init__"}
    names.add(mirrored.name)  # the package as a whole
    named = test.stem.removeprefix("test_")
    if any(named == name or named.startswith(name + "_") for name in names):
        return None
    return f"named for no module of {mirrored.relative_to(package.parent).as_posix()}/ (test_<module>[_<aspect>].py)"


def test_every_test_file_mirrors_a_module_of_the_package():
    wrong = [f"{t.relative_to(ROOT)}: {why}" for t in files_of_tests() if (why := misplaced(t))]
    assert not wrong, "test files that mirror no module (see tests/README.md):\n" + "\n".join(wrong)


def test_the_check_finds_a_file_in_a_folder_of_its_own_and_a_file_named_for_nothing(tmp_path):
    package, tests = tmp_path / "yieldcli", tmp_path / "tests"
    for module in ("cli/commands/write.py", "cli/__init__.py", "sandbox/program/strategy.c", "amounts.py"):
        (package / module).parent.mkdir(parents=True, exist_ok=True)
        (package / module).touch()
    kept = ["cli/commands/test_write.py", "cli/commands/test_write_journal.py", "test_amounts.py"]
    kept += ["sandbox/program/test_strategy_flows.py", "cli/test_cli.py", "architecture/test_layers.py"]
    for name in kept:
        assert misplaced(tests / name, package, tests) is None, name
    assert "mirrors no folder" in misplaced(tests / "unit" / "test_write.py", package, tests)
    assert "named for no module" in misplaced(tests / "cli" / "commands" / "test_writer.py", package, tests)
    assert "named for no module" in misplaced(tests / "test_everything.py", package, tests)


def test_the_architecture_tests_are_in_their_folder():
    found = {p.name for p in (TESTS / "architecture").glob("test_*.py")}
    for name in ("layers", "import_cycles", "module_size", "lazy_imports", "types", "style", "readme", "docs_site"):
        assert f"test_{name}.py" in found, name
