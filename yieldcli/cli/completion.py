"""Shell completion: the scripts in `completions/`, and the answers they ask `yield` for.

Each script runs `yield` with `_YIELD_COMPLETE=complete_<shell>`, `COMP_WORDS` (the words of the
line, newline-separated) and `COMP_CWORD` (the index of the word being completed); `yield` prints
one candidate per line. No candidates means "complete file names" (the scripts fall back to them).
Every Tab press starts a process, so option values are answered before the command tree is built.
Regenerate the scripts with `python -m yieldcli.cli.completion completions/`; a test fails when stale.
`yield completion SHELL` prints the same script.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from yieldcli.cli.render.formats import MODES
from yieldcli.solana.cluster import COMMITMENTS

SHELLS = {"bash": "yield.bash", "zsh": "_yield", "fish": "yield.fish"}

RPC_MONIKERS = ("mainnet-beta", "devnet", "testnet", "localhost")
COLOR_MODES = ("auto", "always", "never")
ORDERS = ("asc", "desc")


def _symbols(env: Mapping[str, str], words: list[str]) -> list[str]:
    """The built-in symbols, then those of listed tokens learned from the chain in the last day (written
    down when a command read them: a Tab press asks no network)."""
    from yieldcli.chain.token_names import remembered_symbols
    from yieldcli.tokens import symbols

    return symbols() + remembered_symbols()


def _profiles(env: Mapping[str, str], words: list[str]) -> list[str]:
    """Profile names from the config file the line would use (--config, YIELD_CONFIG, default)."""
    from yieldcli import config as cfg
    from yieldcli.environment import Environment

    flag = _value_of(words, "--config")
    environment = Environment(vars=dict(env))
    try:
        path = cfg.resolve_config_path(flag, environment).value
        return cfg.ConfigFile.load(Path(str(path)).expanduser()).profiles()
    except Exception:  # a broken config file must not break the shell: no names to offer
        return []


def _sort_fields(env: Mapping[str, str], words: list[str]) -> list[str]:
    """The fields of the listing on the line: positions or balances."""
    from yieldcli.api.sort_fields import SORT_FIELDS

    kind = next((word for word in words if word in SORT_FIELDS), None)
    return list(SORT_FIELDS[kind]) if kind else []


def _config_keys(env: Mapping[str, str], words: list[str]) -> list[str]:
    from yieldcli.config import SPECS

    return list(SPECS)


# Values of options, by option name: answered without importing the command tree.
OPTION_VALUES: dict[str, Callable[[Mapping[str, str], list[str]], list[str]] | tuple[str, ...]] = {
    "-o": MODES,
    "--output": MODES,
    "--asset": _symbols,
    "-u": RPC_MONIKERS,
    "--url": RPC_MONIKERS,
    "--commitment": COMMITMENTS,
    "--color": COLOR_MODES,
    "--order": ORDERS,
    "--profile": _profiles,
    "--sort-by": _sort_fields,
}
# Values of `config set KEY VALUE`, by key.
SETTING_VALUES: dict[str, tuple[str, ...]] = {"output": MODES, "color": COLOR_MODES, "rpc_url": RPC_MONIKERS}


def _value_of(words: list[str], name: str) -> str | None:
    for i, word in enumerate(words):
        if word == name and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def _values(option: str, env: Mapping[str, str], words: list[str]) -> list[str] | None:
    source = OPTION_VALUES.get(option)
    if source is None:
        return None
    return list(source) if isinstance(source, tuple) else source(env, words)


def candidates(words: list[str], cword: int, env: Mapping[str, str]) -> list[str]:
    """What may stand at `words[cword]` (words[0] is the program)."""
    words = list(words) + [""] * max(0, cword + 1 - len(words))
    current, before = words[cword], words[1:cword]
    if current.startswith("--") and "=" in current:
        name, _, prefix = current.partition("=")
        values = _values(name, env, before)
        return [f"{name}={v}" for v in values or () if v.startswith(prefix)]
    if before:
        values = _values(before[-1], env, before)
        if values is not None:
            return [v for v in values if v.startswith(current)]
    return [c for c in _from_tree(before, current, env) if c.startswith(current)]


def _options(command: Any) -> dict[str, bool]:
    """Option names of a click command, each with whether it takes a value."""
    names: dict[str, bool] = {}
    for param in command.params:
        if getattr(param, "hidden", False) or param.param_type_name != "option":
            continue
        for name in (*param.opts, *param.secondary_opts):
            names[name] = not (param.is_flag or param.count)
    return names


def _from_tree(before: list[str], current: str, env: Mapping[str, str]) -> list[str]:
    """Subcommands, options (the command's own, then the global ones, allowed anywhere) and
    positional values, from the command tree."""
    import typer

    from yieldcli.cli.app import app

    root = typer.main.get_command(app)
    global_options = _options(root)
    command = root
    path: list[str] = []
    positional: list[str] = []
    i = 0
    while i < len(before):
        word = before[i]
        takes = {**global_options, **_options(command)}
        if word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            if name.startswith("--"):
                i += 2 if takes.get(name) and "=" not in word else 1
            else:  # -o VALUE, -ojson, or flags run together (-vq)
                i += 2 if len(word) == 2 and takes.get(word) else 1
            continue
        sub = command.get_command(None, word) if hasattr(command, "get_command") else None
        if sub is not None and not positional:
            command, path = sub, [*path, word]
        else:
            positional.append(word)
        i += 1
    if current.startswith("-"):
        own = _options(command) | {"--help": False}
        return list(own) + [name for name in global_options if name not in own and command is not root]
    if hasattr(command, "list_commands"):
        return [name for name in command.list_commands(None)]
    if path == ["completion"] and not positional:
        return list(SHELLS)
    if path[:1] == ["config"] and path[1:] in (["get"], ["set"], ["unset"]):
        if not positional:
            return _config_keys(env, before)
        if path[1] == "set" and len(positional) == 1:
            return list(SETTING_VALUES.get(positional[0], ()))
    return []


def respond(env: Mapping[str, str], out: TextIO | None = None) -> int:
    """Answer one completion request from a script (see the module docstring)."""
    out = out or sys.stdout
    raw = env.get("COMP_WORDS", "")
    words = raw.split("\n") if "\n" in raw else raw.split()
    try:
        cword = int(env.get("COMP_CWORD", len(words) - 1))
    except ValueError:
        return 0
    try:
        found = candidates(words, cword, env)
    except Exception:  # completion never prints a traceback into the user's shell
        return 0
    out.write("".join(f"{c}\n" for c in found))
    return 0


BASH = r"""# bash completion for yield (generated by `python -m yieldcli.cli.completion`)
_yield_completion() {
    local IFS=$'\n'
    COMPREPLY=( $(COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD _YIELD_COMPLETE=complete_bash "$1" 2>/dev/null) )
    return 0
}
complete -o default -F _yield_completion yield
"""

ZSH = r"""#compdef yield
# zsh completion for yield (generated by `python -m yieldcli.cli.completion`)
_yield() {
    local -a found
    found=("${(@f)$(COMP_WORDS="${(pj:\n:)words}" COMP_CWORD=$((CURRENT - 1)) \
        _YIELD_COMPLETE=complete_zsh "${words[1]}" 2>/dev/null)}")
    found=(${found:#})
    if (( ${#found} )); then
        compadd -Q -a found
    else
        _files
    fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _yield "$@"  # autoloaded from $fpath: this file is the function's first call
else
    compdef _yield yield  # sourced
fi
"""

FISH = r"""# fish completion for yield (generated by `python -m yieldcli.cli.completion`)
function __yield_complete
    set -l words (commandline -opc) (commandline -ct)
    set -l found (env COMP_WORDS=(string join \n -- $words | string collect --allow-empty) \
        COMP_CWORD=(math (count $words) - 1) _YIELD_COMPLETE=complete_fish $words[1] 2>/dev/null)
    if test (count $found) -gt 0
        printf '%s\n' $found
    else
        __fish_complete_path (commandline -ct)
    end
end
complete -c yield -f -a '(__yield_complete)'
"""


def script(shell: str) -> str:
    return {"bash": BASH, "zsh": ZSH, "fish": FISH}[shell]


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "completions")
    folder.mkdir(parents=True, exist_ok=True)
    for shell, name in SHELLS.items():
        (folder / name).write_text(script(shell), encoding="utf-8")
        print(folder / name)


if __name__ == "__main__":
    main()
