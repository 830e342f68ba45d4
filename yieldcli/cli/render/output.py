"""The one output sink: a result looks the same in every command for each format (`formats.FORMATS`:
table, json, ndjson, csv), whose object decides how each shape of result is written.

Here: what every format shares. On a terminal, what is drawn waits until the progress bar is gone,
is paged when longer than the screen, and JSON is indented and coloured for reading.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from yieldcli.cli.render.amount_fields import add_amounts
from yieldcli.cli.render.formats import FORMATS, MODES
from yieldcli.cli.render.text import wrapped
from yieldcli.environment import Environment
from yieldcli.errors import UsageError, YieldError
from yieldcli.escapes import escaped

if TYPE_CHECKING:  # only named in annotations: render/ depends on no part of api/, rich is imported when drawing
    from rich.console import Console

    from yieldcli.api.pagination import PageResult
    from yieldcli.cli.render.layout import Column
    from yieldcli.cli.render.progress import Bar

T = TypeVar("T")

_ANSI = {"red": "31", "yellow": "33", "green": "32", "bold": "1"}


def silence_stdout() -> None:
    """The reader of stdout went away: what is still buffered for it goes nowhere, quietly (else the
    interpreter's last flush fails again and says so)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def resolve_mode(requested: str | None, env: Environment) -> str:
    if requested is None:
        return "table" if env.stdout_isatty else "json"
    mode = requested.lower()
    if mode not in MODES:
        raise UsageError(f"invalid output format {requested!r}", hint="use one of: " + ", ".join(MODES))
    return mode


class Output:
    def __init__(
        self,
        env: Environment,
        mode: str,
        *,
        color: bool,
        quiet: bool = False,
        pager: bool = True,
        color_choice: str = "auto",
    ):
        self.env = env
        self.mode = mode
        self.format = FORMATS[mode]
        self.color = color
        self.color_choice = color_choice
        self.quiet = quiet
        self.pager = pager

    # --- data (stdout) ---------------------------------------------------------------------------

    def page(self, result: PageResult, progress: Bar | None = None) -> None:
        """Tables hold every row; the machine formats stream items as they arrive (piped)."""
        held = self._hold(result.entries, progress)
        if held is not result.entries:
            result.entries, result.pages = held, None  # the stream is read: only the held list is left
        self.format.page(self, result if self.mode == "table" else add_amounts(result))

    def wallet_pages(
        self, kind: str, results: Iterable[tuple[str, PageResult | YieldError]], progress: Bar | None = None
    ) -> list[tuple[str, YieldError]]:
        """Results of many wallets, in input order: each row carries its `wallet`; failures are
        reported on stderr as they come and returned, so the others still complete."""
        failures: list[tuple[str, YieldError]] = []
        results = self._hold(results, progress)

        def rows() -> Iterator[tuple[str, PageResult]]:
            for wallet, result in results:
                if isinstance(result, YieldError):
                    failures.append((wallet, result))
                    self.env.stderr.write(f"{self.paint('error:', 'red')} wallet {wallet}: {result}\n")
                    self.env.stderr.flush()
                    continue
                yield wallet, result if self.mode == "table" else add_amounts(result)

        self.format.wallet_pages(self, kind, rows(), len(results) if isinstance(results, list) else None, failures)
        return failures

    def object(self, kind: str, body: Any, typed: Any = None) -> None:
        self.format.object(self, kind, body, typed)

    def result(self, body: dict[str, Any], lines: Callable[[], list[str]], *, kind: str | None = None) -> None:
        """One result that is not a service body: `lines()` for people in a table; in the machine
        formats the body (csv: the columns of `kind`, else the body's own keys)."""
        self.format.result(self, body, lines, kind)

    def report(self, body: dict[str, Any], lines: Callable[[], Iterable[str]]) -> None:
        """What an action did (a transaction, a nonce account): `lines()` for people in a table; in
        every machine format the body as one line of JSON, the shape scripts read whatever they asked."""
        self.format.report(self, body, lines)

    def for_people(self, show: Callable[[], None]) -> None:
        """`show()` only in a table: what a person reads besides the report (a refreshed position,
        the program's logs); the machine formats carry it in the body already."""
        if self.format.for_people:
            show()

    def before_prompt(self, paint: Callable[[Console], None], *, prompting: bool, paged: bool = True) -> None:
        """What a person reads before deciding (a transaction's review), drawn with rich: on stdout in
        a table (through the pager when longer than the screen); in the machine formats, whose stdout
        is the script's, on stderr when a prompt follows and not at all otherwise. `paged` False (--yes):
        never through the pager, which would wait for a person no one asked for."""
        if self.format.for_people:
            self.draw(paint, paged=paged)  # paged like a read when longer than the screen, read before the prompt
            return
        if not prompting:
            return
        from yieldcli.cli.render.consoles import console

        paint(console(self.env, stderr=True, color=self.color))

    def records(
        self, rows: list[dict[str, Any]], *, fields: Sequence[str], table: Callable[[], None], whole: Any = None
    ) -> None:
        """Rows of one kind: `table()` draws them for people; JSON is `whole` (default: the list of
        rows), NDJSON one row per line, CSV a header of `fields` and one line per row."""
        self.format.records(self, rows, fields, table, whole)

    def lines(self, lines: Iterable[str]) -> None:
        """Plain lines on stdout (already fitted and painted by the caller)."""
        self.env.stdout.write("".join(line + "\n" for line in lines))
        self.env.stdout.flush()

    def value(self, text: str) -> None:
        """One bare value on stdout in every mode, for `$(yield ...)`: a path, a setting."""
        self.line(text)

    def line(self, text: str) -> None:
        self.env.stdout.write(text + "\n")
        self.env.stdout.flush()

    def columns(self, columns: list[Column], *, title: str | None = None) -> None:
        """A table of ready-made `layout.Column`s, fitted to the terminal like every other table."""
        from yieldcli.cli.render import layout

        self.draw(lambda console: layout.draw(console, columns, title=title))

    def _hold(self, items: Iterable[T], progress: Bar | None) -> Iterable[T]:
        """On a terminal, read every item while the bar runs, then erase the bar: nothing is drawn
        on the screen the bar is on. Piped, items keep streaming as they arrive."""
        if not self.env.stdout_isatty:
            return items
        held = list(items)
        if progress is not None:
            progress.close()
        return held

    def draw(self, paint: Callable[[Console], None], *, paged: bool = True) -> None:
        """Draw with rich: straight to stdout when piped; on a terminal into memory, then paged."""
        if not self.env.stdout_isatty:
            from yieldcli.cli.render.consoles import console

            paint(console(self.env, stderr=False, color=self.color))
            return
        from yieldcli.cli.render import pager
        from yieldcli.cli.render.consoles import screen_console

        screen = screen_console(self.env, color=self.color, width=pager.screen_size(self.env)[0])
        paint(screen)
        drawn = screen.file
        assert isinstance(drawn, io.StringIO)  # screen_console draws into memory
        pager.show(self.env, drawn.getvalue(), enabled=self.pager and paged)

    def pretty(self, value: Any) -> None:
        """JSON for a person: indented, coloured when colour is on; integers as exact as piped."""
        from rich.json import JSON

        self.draw(lambda console: console.print(JSON.from_data(value, indent=2, highlight=self.color), soft_wrap=True))

    # --- everything else (stderr) ----------------------------------------------------------------

    def info(self, text: str) -> None:
        if not self.quiet:
            self.env.stderr.write(wrapped(text, self.env.stderr) + "\n")
            self.env.stderr.flush()

    def warn(self, text: str) -> None:
        # A warning may quote another party (an RPC's error): shown so it reads as it is, on one line.
        line = wrapped(f"warning: {escaped(text.replace(chr(10), ' '))}", self.env.stderr)
        self.env.stderr.write(self.paint("warning:", "yellow") + line.removeprefix("warning:") + "\n")
        self.env.stderr.flush()

    def paint(self, text: str, colour: str, *, stderr: bool = True) -> str:
        """`text` in a colour that carries meaning (red error, yellow warning, green confirmed),
        only when that stream is a terminal and colour is on; ANSI codes without importing rich."""
        isatty = self.env.stderr_isatty if stderr else self.env.stdout_isatty
        if not self.env.color_enabled(self.color_choice, isatty):
            return text
        return f"\x1b[{_ANSI[colour]}m{text}\x1b[0m"
