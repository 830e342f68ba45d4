"""A progress bar on stderr for multi-page fetches: only when a person is watching stderr."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from yieldcli.environment import Environment

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


class Bar:
    """Called with (done, total) as pages or wallets arrive; `close()` erases it for good."""

    def __init__(self, progress: Progress, what: str):
        self._progress = progress
        self._what = what
        self._task: TaskID | None = None

    def __call__(self, done: int, total: int) -> None:
        if total <= 1:
            return
        if self._task is None:
            self._task = self._progress.add_task(self._what, total=total)
        self._progress.update(self._task, completed=done, total=total)

    def close(self) -> None:
        self._progress.stop()  # transient: the bar's lines are gone before anything else is drawn


@contextmanager
def page_progress(env: Environment, what: str, *, enabled: bool) -> Iterator[Bar | None]:
    if not enabled or not env.stderr_isatty:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from yieldcli.cli.render.consoles import console

    bar = Progress(
        TextColumn(what),
        BarColumn(),
        MofNCompleteColumn(),
        console=console(env, stderr=True, color=True),
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    )
    with bar:
        yield Bar(bar, what)
