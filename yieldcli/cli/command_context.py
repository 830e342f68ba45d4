"""How a command finds the run's Session (built by the root callback in app.py)."""

import typer

from yieldcli.cli.session import Session


def session_of(ctx: typer.Context) -> Session:
    session = ctx.find_root().obj
    assert isinstance(session, Session), "the root callback sets the run's Session first"
    return session
