"""A progress bar on stderr for multi-page fetches: only when a person is watching stderr."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from yieldcli.environment import Environment


@contextmanager
def page_progress(env: Environment, what: str, *, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    if not enabled or not env.stderr_isatty:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from yieldcli.render.consoles import console

    bar = Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), console=console(env, stderr=True, color=True),
                   transient=True)
    task = None

    def update(done: int, total: int) -> None:
        nonlocal task
        if total <= 1:
            return
        if task is None:
            task = bar.add_task(what, total=total)
        bar.update(task, completed=done, total=total)

    with bar:
        yield update
