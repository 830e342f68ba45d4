"""Global options anywhere on the line: `yield balances W --verbose` as well as `yield --verbose balances W`.

Click only parses a group's options before its subcommand. Users of gh and kubectl expect otherwise,
so a global option found after the subcommand is moved in front of it, unless the subcommand has
an option of the same name (write commands have their own --timeout, say) or it follows `--`.
"""

from __future__ import annotations

import re
from typing import Any

from typer._click.core import Command
from typer.core import TyperOption

from yieldcli.errors import UsageError


def hoist_global_options(root: Command, args: list[str]) -> list[str]:
    """`root` is the click group of the app; returns a new argument list."""
    takes_value: dict[str, bool] = {}
    for param in root.params:
        if isinstance(param, TyperOption):  # every global parameter is one: the root takes no argument
            for name in (*param.opts, *param.secondary_opts):
                takes_value[name] = not (param.is_flag or param.count)

    # Skip the options already in front, then walk down the subcommand path.
    root_end = _root_options_end(args, takes_value)
    i = root_end
    command = root
    while i < len(args) and hasattr(command, "get_command"):
        found = command.get_command(None, args[i])
        if found is None:
            break
        command = found
        i += 1
    if command is root:
        return list(args)
    own = {
        name
        for param in command.params
        for name in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))
    }

    own_takes_value = {
        name: not (p.is_flag or p.count)
        for p in command.params
        if isinstance(p, TyperOption)
        for name in (*p.opts, *p.secondary_opts)
    }
    tail = _split_short_flags(args[i:], {**takes_value, **own_takes_value})
    args = args[:i] + tail
    hoisted: list[str] = []
    rest: list[str] = []
    j = i
    while j < len(args):
        token = args[j]
        if token == "--":
            rest.extend(args[j:])
            break
        name, has_inline = _split(token)
        if name in takes_value and name not in own:
            width = 2 if takes_value[name] and not has_inline and j + 1 < len(args) else 1
            hoisted.extend(args[j : j + width])
            j += width
            continue
        rest.append(token)
        j += 1
    return args[:root_end] + hoisted + args[root_end:i] + rest


def _split_short_flags(args: list[str], takes_value: dict[str, bool]) -> list[str]:
    """`-vq` as `-v -q`, as click does for one command's flags, but across global and own options;
    the last letter may take a value (`-vo json`). Anything not made of known letters is left alone."""
    out: list[str] = []
    for k, token in enumerate(args):
        if token == "--":
            return out + args[k:]
        letters = [f"-{c}" for c in token[1:]] if token.startswith("-") and not token.startswith("--") else []
        if (
            len(letters) > 1
            and all(name in takes_value for name in letters)
            and not any(takes_value[name] for name in letters[:-1])
        ):
            out.extend(letters)
        else:
            out.append(token)
    return out


def _split(token: str) -> tuple[str, bool]:
    name, sep, _ = token.partition("=")
    return (name, bool(sep)) if token.startswith("--") else (token, False)


def _root_options_end(args: list[str], takes_value: dict[str, bool]) -> int:
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        name, has_inline = _split(args[i])
        i += 2 if takes_value.get(name) and not has_inline else 1
    return i


def negative_numbers_as_values() -> None:
    """`yield config set timeout -5`: a negative number where a value goes is that value, as in gh
    and kubectl, not an unknown option `-5` (then the setting's own check says what is wrong with it).

    Click decides per token, in its parser, that anything starting with `-` is an option; its parser
    is made by name in `core`, so the subclass below takes its place for every command of this run.
    """
    from typer._click import core, parser

    number = re.compile(r"-\d[\d_.,]*")

    class Parser(parser._OptionParser):
        def _process_opts(self, arg: str, state: parser._ParsingState) -> None:
            if number.fullmatch(arg) and arg not in self._short_opt and self.allow_interspersed_args:
                state.largs.append(arg)
                return
            super()._process_opts(arg, state)

    setattr(core, "_OptionParser", Parser)  # noqa: B010 -- a name core does not export


# Global options that cannot both be meant: the first ignores the second, or each undoes the other.
CONFLICTS = (
    ("sandbox", "api_url", "--sandbox", "--api-url", "--sandbox talks to its own embedded service"),
    ("verbose", "quiet", "-v/--verbose", "-q/--quiet", "one asks for more on stderr, the other for less"),
)


def check_conflicts(options: Any) -> None:
    """Refuse (exit 2) global options of which one would be ignored without a word: `--sandbox --api-url X`
    never reaches X, `-vq` would let one win. `options` is the run's `session.GlobalOptions`."""
    for first, second, first_flag, second_flag, why in CONFLICTS:
        if getattr(options, first) and getattr(options, second) not in (None, False):
            raise UsageError(
                f"{first_flag} and {second_flag} cannot be used together: {why}",
                hint=f"drop one of {first_flag} and {second_flag}",
                kind="usage.conflict",
            )
