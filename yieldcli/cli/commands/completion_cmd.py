"""`yield completion SHELL`: the shell's completion script on stdout, the one `completions/` holds."""

from __future__ import annotations

import sys

import typer

from yieldcli.cli.completion import SHELLS, script
from yieldcli.errors import UsageError


def completion(
    shell: str = typer.Argument(..., help="bash, zsh or fish.", show_default=False),
) -> None:
    """Print the completion script for SHELL (the same text as completions/ in the source).

    \b
    Examples:
    bash: source <(yield completion bash)
    zsh:  yield completion zsh > "${fpath[1]}/_yield"
    fish: yield completion fish > ~/.config/fish/completions/yield.fish
    """
    if shell not in SHELLS:
        raise UsageError(f"no completion script for {shell!r}", hint="use one of: " + ", ".join(SHELLS))
    sys.stdout.write(script(shell))
    sys.stdout.flush()
