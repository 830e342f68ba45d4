"""The `yield` executable. `--version` answers before anything heavy is imported; a Tab press in a
shell with our completion script (`_YIELD_COMPLETE`, see completion.py) is answered by completion,
which reads the command tree from `app`: the arrows run entry -> completion -> app, entry -> app.
The executable ends without the interpreter's teardown when it has nothing to do (`quick_exit`);
`call` runs one command line the same way inside a Python process that goes on (the tests)."""

import os
import sys

from yieldcli.cli import quick_exit
from yieldcli.version import __version__


def main() -> None:
    args = sys.argv[1:]
    if _version_answered(args):
        return
    quick_exit.arm()
    try:
        _dispatch(args)
    except SystemExit as exc:
        quick_exit.ended(exc.code)
        raise
    quick_exit.ended(0)


def call(args: list[str]) -> None:
    """One command line, as `main` runs it but for the quick ending: it returns on success or raises
    `SystemExit` with the exit code. The caller provides sys.argv, the environment and the streams,
    and calls `app.end_run()` after it."""
    if not _version_answered(args):
        _dispatch(args)


def _version_answered(args: list[str]) -> bool:
    if args == ["--version"]:
        sys.stdout.write(f"yield {__version__}\n")
        return True
    if "--version" in args:
        from yieldcli.cli.version import VERBOSE_FLAGS, is_version_request, version_text

        if is_version_request(args):  # with -v: still before anything heavy is imported
            sys.stdout.write(version_text(any(arg in VERBOSE_FLAGS for arg in args)))
            return True
    return False


def _dispatch(args: list[str]) -> None:
    if "_YIELD_COMPLETE" in os.environ:
        from yieldcli.cli.completion import respond

        sys.exit(respond(os.environ))
    from yieldcli.cli.app import main as run

    run(args)
