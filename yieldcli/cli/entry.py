"""The `yield` executable. `--version` answers before anything heavy is imported; a Tab press in a
shell with our completion script (`_YIELD_COMPLETE`, see completion.py) is answered by completion,
which reads the command tree from `app`: the arrows run entry -> completion -> app, entry -> app.
Both end without the interpreter's teardown when it has nothing to do (`quick_exit`)."""

import os
import sys

from yieldcli.cli import quick_exit
from yieldcli.version import __version__


def main() -> None:
    args = sys.argv[1:]
    if args == ["--version"]:
        sys.stdout.write(f"yield {__version__}\n")
        return
    if "--version" in args:
        from yieldcli.cli.version import VERBOSE_FLAGS, is_version_request, version_text

        if is_version_request(args):  # with -v: still before anything heavy is imported
            sys.stdout.write(version_text(any(arg in VERBOSE_FLAGS for arg in args)))
            return
    quick_exit.arm()
    try:
        if "_YIELD_COMPLETE" in os.environ:
            from yieldcli.cli.completion import respond

            sys.exit(respond(os.environ))
        from yieldcli.cli.app import main as run

        run(args)
    except SystemExit as exc:
        quick_exit.ended(exc.code)
        raise
    quick_exit.ended(0)
