"""One check of a setup (`yield doctor`, `yield init`, `yield auth status --check`): ok, warn or
fail, with a hint, and for a failure the exit code it stands for."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from yieldcli.errors import AuthError, ConfigError, ExitCode, NetworkError, ServiceError, YieldError

if TYPE_CHECKING:
    from yieldcli.cli.session import Session


def failure(check: Check, message: str) -> YieldError:
    """The error a failed check ends the command with: its class carries the exit code."""
    classes: dict[int, type[YieldError]] = {
        ExitCode.CONFIG: ConfigError,
        ExitCode.AUTH: AuthError,
        ExitCode.NETWORK: NetworkError,
    }
    return classes.get(check.code, ServiceError)(message, hint=check.hint or None)


class Check(NamedTuple):
    name: str
    status: str  # ok, warn, fail
    detail: str
    hint: str = ""
    code: int = ExitCode.OK  # the exit code a failure stands for

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "hint": self.hint or None}


def home_relative(session: Session, path: Path | str) -> str:
    """A path as people write it: `~/...` under the home directory."""
    text, home = str(path), session.env.get("HOME")
    return "~" + text[len(home) :] if home and text.startswith(home.rstrip("/") + "/") else text


def ms_since(started: float) -> str:
    return f"{(time.monotonic() - started) * 1000:.0f} ms"
