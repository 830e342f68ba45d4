"""Static shell-completion scripts, as shipped in `completions/`.

Regenerate with `python -m yieldcli.completion completions/`; a test fails when they are stale.
"""

import sys
from pathlib import Path

SHELLS = {"bash": "yield.bash", "zsh": "_yield", "fish": "yield.fish"}


def script(shell: str) -> str:
    import typer
    from typer._click.shell_completion import get_completion_class
    from typer._completion_classes import completion_init

    from yieldcli.app import app

    completion_init()
    cls = get_completion_class(shell)
    command = typer.main.get_command(app)
    text = cls(command, {}, "yield", "_YIELD_COMPLETE").source()
    if shell == "zsh":
        # compinit ignores a file in $fpath whose first line is not `#compdef`.
        text = text.lstrip("\n")
    return text if text.endswith("\n") else text + "\n"


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "completions")
    folder.mkdir(parents=True, exist_ok=True)
    for shell, name in SHELLS.items():
        (folder / name).write_text(script(shell), encoding="utf-8")
        print(folder / name)


if __name__ == "__main__":
    main()
