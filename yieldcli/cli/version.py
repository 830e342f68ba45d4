"""`yield --version`: one line; with -v, the versions a bug report needs."""

from __future__ import annotations

import platform
import sys

from yieldcli.version import __version__

VERBOSE_FLAGS = ("-v", "--verbose")

# What decides how a transaction is built, checked and sent, besides `yield` itself.
PACKAGES = (("solders", "solders"), ("solana-py", "solana"), ("httpx2", "httpx2"), ("rich", "rich"), ("typer", "typer"))


def version_text(verbose: bool) -> str:
    if not verbose:
        return f"yield {__version__}\n"
    from importlib import metadata

    lines = [
        f"yield {__version__}",
        f"python {platform.python_version()} ({platform.python_implementation()}, {sys.executable})",
    ]
    for label, distribution in PACKAGES:
        try:
            lines.append(f"{label} {metadata.version(distribution)}")
        except metadata.PackageNotFoundError:
            lines.append(f"{label} not installed")
    lines.append(f"platform {platform.platform()} ({platform.machine()})")
    return "\n".join(lines) + "\n"


def is_version_request(args: list[str]) -> bool:
    """`--version`, alone or with -v/--verbose: answered before the command tree is loaded."""
    return "--version" in args and all(arg == "--version" or arg in VERBOSE_FLAGS for arg in args)
