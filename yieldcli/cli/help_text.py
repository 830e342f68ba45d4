"""Help that reads like gh's and the Solana CLI's: each option's placeholder names its value
(`--amount AMOUNT`, `--timeout SECONDS`, not click's `<str>`), the summary of a command in a list is
its first sentence whole (never cut with "..."), and a group without an example of its own shows
the first example of each of its commands.

Applied to each command as it is built (`app.LazyCommands`), so no command has to remember it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from typer.core import TyperOption

if TYPE_CHECKING:
    from typer._click.core import Command

# Placeholders that say more than the option's own name would.
PLACEHOLDERS = {
    "--output": "FORMAT",
    "--color": "WHEN",
    "--config": "FILE",
    "--wallets-file": "FILE",
    "--profile": "NAME",
    "--api-url": "URL",
    "--url": "URL_OR_MONIKER",
    "--keypair": "KEYPAIR",
    "--jq": "EXPRESSION",
    "--strategy": "STRATEGY_ID",
    "--fund": "FUND_ID",
    "--timeout": "SECONDS",
    "--confirm-timeout": "SECONDS",
    "--page": "N",
    "--limit": "N",
    "--concurrency": "N",
    "--shell": "SHELL",
}
# Room a summary has beside the command names at 80 columns: longer first sentences keep their
# part before a colon (the rest is detail the command's own help gives).
SUMMARY_ROOM = 60
# A group's examples, at most this many of its commands'.
GROUP_EXAMPLES = 3


def polish(command: Command) -> None:
    """Placeholders, summaries and group examples for `command` and everything under it."""
    command.short_help = summary(command.help or "")
    for param in command.params:
        takes_value = isinstance(param, TyperOption) and not (param.is_flag or param.count)
        # A choice lists its values already: <asc|desc>.
        if takes_value and param.metavar is None and getattr(param.type, "choices", None) is None:
            param.metavar = placeholder(param.opts)
    commands = getattr(command, "commands", None)
    if commands is None:
        return
    for sub in commands.values():
        polish(sub)
    if command.help and "Example" not in command.help:
        # The first example of each command that fits 80 columns as it is drawn (indented by 2).
        examples = [next(iter(fits), "") for sub in commands.values() if (fits := _examples(sub.help or ""))]
        if any(examples):
            command.help += "\n\nExamples:\n\n\b\n" + "\n".join([e for e in examples if e][:GROUP_EXAMPLES])


def placeholder(opts: list[str]) -> str:
    """`--amount` -> AMOUNT, unless PLACEHOLDERS names it better."""
    long = next((o for o in opts if o.startswith("--")), opts[0])
    return PLACEHOLDERS.get(long) or long.lstrip("-").replace("-", "_").upper()


def summary(help_text: str) -> str:
    """The first sentence of the first paragraph, whole; a long one up to its first colon."""
    paragraph = help_text.strip().split("\n\n", 1)[0].replace("\n", " ")
    sentence = re.split(r"(?<=\.)\s", paragraph, maxsplit=1)[0].rstrip(".")
    if len(sentence) > SUMMARY_ROOM and ": " in sentence:
        sentence = sentence.split(": ", 1)[0]
    return sentence


def _examples(help_text: str) -> list[str]:
    """The command lines a help text gives as examples (`Example: yield ...`, `Example: printf ... | yield ...`)."""
    found = [m.group(1).strip() for m in re.finditer(r"Examples?:\s*([^\n]*yield [^\n]+)", help_text)]
    return [line for line in found if len(line) <= 78]
