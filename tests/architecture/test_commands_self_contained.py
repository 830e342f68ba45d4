"""Each command is self-contained: a module under `yieldcli/cli/commands/` is a command (`app.COMMANDS`
names it) and imports no other command's module. What several commands share lives outside the
folder (`cli/flags.py`, `cli/command_context.py`, `cli/checks/`, `cli/config_values.py`,
`cli/api_key_input.py`), and a group made of two command modules (`config` and its `trust`) is put
together by `app.SUBCOMMANDS`, not by one command importing the other.

Imports are read with `ast` as `test_layers.py` reads them, type-only ones included (a type named
across two commands is a dependency between them all the same).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.architecture.test_layers import PACKAGE, module_name, runtime_imports, under
from yieldcli.cli.app import SUBCOMMANDS, every_command

COMMANDS_DIR = PACKAGE / "cli" / "commands"


def command_modules() -> set[str]:
    """Every module a command of `yield` is loaded from."""
    found = {module for module, _ in every_command().values()}
    found.update(module for group in SUBCOMMANDS.values() for module, _ in group.values())
    return found


def imported_commands(path: Path, name: str) -> set[str]:
    """The command modules `path` (the module `name`) imports, itself aside."""
    imports = runtime_imports(path, types_too=True)
    return {command for command in command_modules() - {name} if any(under(m, (command,)) for m in imports)}


CLI_MODULES = sorted((PACKAGE / "cli").rglob("*.py"))


@pytest.mark.parametrize("path", CLI_MODULES, ids=module_name)
def test_no_module_of_the_command_line_imports_a_command(path):
    # app.py names them as text in its tables and imports them by name when one runs: not an import here.
    bad = imported_commands(path, module_name(path))
    assert not bad, (
        f"{module_name(path)} imports the command modules {sorted(bad)}: move what they share out of cli/commands/"
    )


def test_every_module_in_the_commands_folder_is_a_command():
    here = {module_name(p) for p in COMMANDS_DIR.glob("*.py") if p.name != "__init__.py"}
    not_commands = here - command_modules()
    assert not not_commands, (
        f"{sorted(not_commands)} are in cli/commands/ but are no command: "
        "a module several commands share goes outside the folder (cli/flags.py, cli/checks/, ...)"
    )
    assert command_modules() <= here


def test_the_checker_finds_a_command_importing_another(tmp_path):
    # Each form of import counts: at the top, inside a function, and for a type only.
    probe = tmp_path / "probe.py"
    for source, found in (
        ("from yieldcli.cli.commands.doctor import doctor\n", "yieldcli.cli.commands.doctor"),
        ("def f():\n    from yieldcli.cli.commands import config_cmd\n", "yieldcli.cli.commands.config_cmd"),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from yieldcli.cli.commands.auth import auth_app\n",
            "yieldcli.cli.commands.auth",
        ),
        ("from yieldcli.cli.checks.setup import key_accepted\n", None),
    ):
        probe.write_text(source)
        assert imported_commands(probe, "yieldcli.cli.commands.probe") == ({found} if found else set()), source
    probe.write_text("from yieldcli.cli.commands.auth import auth_app\n")
    assert imported_commands(probe, "yieldcli.cli.commands.auth") == set()  # a module is not its own import


def test_config_trust_is_put_together_by_the_app(run):
    # `config trust` is a group of its own module, added to `config` by app.SUBCOMMANDS.
    result = run("config", "--help")
    assert result.code == 0 and "trust" in result.stdout, result.stderr
    result = run("config", "trust", "list", "-o", "json")
    assert result.code == 0 and result.json() == [], result.stderr
