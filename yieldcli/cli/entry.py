"""The `yield` executable. `--version` answers before anything heavy is imported."""

import sys


def main() -> None:
    args = sys.argv[1:]
    if args == ["--version"]:
        from yieldcli import __version__

        sys.stdout.write(f"yield {__version__}\n")
        return
    if "--version" in args:
        from yieldcli.cli.version import VERBOSE_FLAGS, is_version_request, version_text

        if is_version_request(args):  # with -v: still before anything heavy is imported
            sys.stdout.write(version_text(any(arg in VERBOSE_FLAGS for arg in args)))
            return
    from yieldcli.cli.app import main as run

    run(args)
