"""The `yield` executable. `--version` answers before anything heavy is imported."""

import sys


def main() -> None:
    args = sys.argv[1:]
    if args == ["--version"]:
        from yieldcli import __version__

        sys.stdout.write(f"yield {__version__}\n")
        return
    from yieldcli.cli.app import main as run

    run(args)
