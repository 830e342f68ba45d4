"""The one output sink: a result looks the same in every command for each of table, json, ndjson, csv.

Machine formats are written with the json and csv modules straight to stdout (never through rich,
which wraps long lines); tables are built in `tables.py`, imported only when a table is drawn.
On a terminal, what is drawn waits until the progress bar is gone, is paged when longer than the
screen, and JSON is indented and coloured for reading.
"""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from yieldcli import exact_json
from yieldcli.environment import Environment
from yieldcli.errors import UsageError

if TYPE_CHECKING:  # only named in annotations: render/ depends on no part of api/, rich is imported when drawing
    from rich.console import Console

    from yieldcli.api.pagination import PageResult

MODES = ("table", "json", "ndjson", "csv")
_ANSI = {"red": "31", "yellow": "33", "green": "32", "bold": "1"}

# Stable CSV columns: the documented fields, in the order the interface lists them.
CSV_COLUMNS: dict[str, tuple[str, ...]] = {
    "positions": (
        "apy", "decimals", "fund_id", "last_updated", "strategy_id", "strategy_name", "token_address",
        "token_name", "token_symbol", "total_deposited_value", "total_position_value", "yield_earned",
    ),
    "balances": (
        "decimals", "token_address", "token_name", "token_symbol", "total_balance",
        "yield_balance.amount_of_yield", "yield_balance.fund_apy", "yield_balance.fund_id", "yield_balance.funds",
    ),
    "earnings": (
        "apy", "base_asset", "entry_date", "fund_id", "fund_name", "last_updated", "position_value", "yield_earned",
    ),
    "strategy": ("strategy_id", "strategy_name", "apy", "assets", "apy_per_asset"),
    "health": ("status",),
    "auth": ("profile", "source", "location", "key", "accepted", "check"),
}


def resolve_mode(requested: str | None, env: Environment) -> str:
    if requested is None:
        return "table" if env.stdout_isatty else "json"
    mode = requested.lower()
    if mode not in MODES:
        raise UsageError(f"invalid output format {requested!r}", hint="use one of: " + ", ".join(MODES))
    return mode


_CONTROLS = {c: "\ufffd" for c in (*range(0x20), *range(0x7f, 0xa0))}


def printable(text: str) -> str:
    """Text from the service made safe for a terminal: control characters (escape sequences that
    could clear the screen or retitle the window, newlines that would break a row) become `�`."""
    return text.translate(_CONTROLS)


def dumps(value: Any) -> str:
    """Stable JSON: Python ints stay exact at any size, non-ASCII stays readable."""
    return json.dumps(value, ensure_ascii=False)


class Output:
    def __init__(self, env: Environment, mode: str, *, color: bool, quiet: bool = False, pager: bool = True,
                 color_choice: str = "auto"):
        self.env = env
        self.mode = mode
        self.color = color
        self.color_choice = color_choice
        self.quiet = quiet
        self.pager = pager

    # --- data (stdout) ---------------------------------------------------------------------------

    def page(self, result: PageResult, progress=None) -> None:
        """Tables hold every row; the machine formats stream items as they arrive (piped)."""
        result.entries = self._hold(result.entries, progress)
        if self.mode == "table":
            from yieldcli.cli.render import tables

            rows = [typed for _, typed in result.entries]
            self._draw(lambda console: tables.draw_page(console, result.kind, rows, result.more_pages))
        elif self.mode == "json":
            self._json_page(result)
        elif self.mode == "ndjson":
            self.ndjson((raw for raw, _ in result.entries), line=exact_json.dumps_line)
        else:
            self.csv(result.kind, (raw for raw, _ in result.entries))

    def _json_page(self, result: PageResult) -> None:
        """`{"data": [...], "meta": {...}}`, byte for byte what json.dumps gives, written item by item."""
        if self.env.stdout_isatty:
            self._pretty({"data": [raw for raw, _ in result.entries], "meta": result.meta()})
            return
        out = self.env.stdout
        out.write('{"data": [')
        for i, (raw, _) in enumerate(result.entries):
            out.write((", " if i else "") + dumps(raw))
        out.write('], "meta": ' + dumps(result.meta()) + "}\n")
        out.flush()

    def wallet_pages(self, kind: str, results, progress=None) -> list[tuple[str, Exception]]:
        """Results of many wallets, in input order: each row carries its `wallet`; failures are
        reported on stderr as they come and returned, so the others still complete."""
        failures: list[tuple[str, Exception]] = []
        results = self._hold(results, progress)

        def rows():
            for wallet, result in results:
                if isinstance(result, Exception):
                    failures.append((wallet, result))
                    self.env.stderr.write(f"{self.paint('error:', 'red')} wallet {wallet}: {result}\n")
                    self.env.stderr.flush()
                    continue
                yield wallet, result

        if self.mode == "table":
            from yieldcli.cli.render import tables

            def paint(console) -> None:
                for n, (wallet, result) in enumerate(rows()):
                    if n:
                        console.print()
                    console.print(wallet, style="bold", markup=False)
                    tables.draw_page(console, kind, [typed for _, typed in result.entries], result.more_pages)

            self._draw(paint)
        elif self.mode == "csv":
            writer = csv.writer(self.env.stdout, lineterminator="\n")
            columns = CSV_COLUMNS[kind]
            writer.writerow(("wallet", *columns))
            for wallet, result in rows():
                for raw, _ in result.entries:
                    flat = dict(_flatten(raw))
                    writer.writerow([wallet, *(_cell(flat.get(c)) for c in columns)])
                self.env.stdout.flush()
        elif self.mode == "json" and self.env.stdout_isatty:
            data = [{"wallet": wallet, **raw} for wallet, result in rows() for raw, _ in result.entries]
            wallets = len(results) if isinstance(results, list) else len(data)
            self._pretty({"data": data, "meta": {"wallets": wallets, "failed": [w for w, _ in failures], "total": len(data)}})
        else:
            out = self.env.stdout
            count = wallets = 0
            if self.mode == "json":
                out.write('{"data": [')
            for wallet, result in rows():
                wallets += 1
                for raw, _ in result.entries:
                    line = dumps({"wallet": wallet, **raw})
                    if self.mode == "json":
                        out.write((", " if count else "") + line)
                    else:
                        out.write(line + "\n")
                    count += 1
                out.flush()
            if self.mode == "json":
                meta = {"wallets": wallets + len(failures), "failed": [w for w, _ in failures], "total": count}
                out.write('], "meta": ' + dumps(meta) + "}\n")
            out.flush()
        return failures

    def object(self, kind: str, body: Any, typed: Any = None) -> None:
        if self.mode == "table":
            from yieldcli.cli.render import tables

            self._draw(lambda console: tables.draw_object(console, kind, typed if typed is not None else body))
        elif self.mode == "csv":
            self.csv(kind, [body if isinstance(body, dict) else {"status": body}])
        else:
            self._machine_object(body)

    def result(self, body: dict[str, Any], lines: Callable[[], list[str]], *, kind: str | None = None) -> None:
        """One result that is not a service body: `lines()` for people in a table; in the machine
        formats the body (csv: the columns of `kind`, else the body's own keys)."""
        if self.mode == "table":
            self.lines(lines())
        elif self.mode == "csv":
            self._csv_rows(CSV_COLUMNS[kind] if kind else tuple(body), [body])
        else:
            self._machine_object(body)

    def report(self, body: dict[str, Any], lines: Callable[[], Iterable[str]]) -> None:
        """What an action did (a transaction, a nonce account): `lines()` for people in a table; in
        every machine format the body as one line of JSON, the shape scripts read whatever they asked."""
        if self.mode == "table":
            self.lines(lines())
        else:
            self._line(dumps(body))

    def for_people(self, show: Callable[[], None]) -> None:
        """`show()` only in a table: what a person reads besides the report (a refreshed position,
        the program's logs); the machine formats carry it in the body already."""
        if self.mode == "table":
            show()

    def before_prompt(self, paint: Callable[[Console], None], *, prompting: bool) -> None:
        """What a person reads before deciding (a transaction's review), drawn with rich: on stdout in
        a table (through the pager when longer than the screen); in the machine formats, whose stdout is the script's, on stderr when a prompt
        follows and not at all otherwise."""
        if self.mode == "table":
            self._draw(paint)  # paged like a read when longer than the screen, all read before the prompt
            return
        if not prompting:
            return
        from yieldcli.cli.render.consoles import console

        paint(console(self.env, stderr=True, color=self.color))

    def records(self, rows: list[dict[str, Any]], *, fields: Sequence[str], table: Callable[[], None],
                whole: Any = None) -> None:
        """Rows of one kind: `table()` draws them for people; JSON is `whole` (default: the list of
        rows), NDJSON one row per line, CSV a header of `fields` and one line per row."""
        if self.mode == "table":
            table()
        elif self.mode == "ndjson":
            self.ndjson(rows)
        elif self.mode == "csv":
            self._csv_rows(fields, rows)
        else:
            self._machine_object(rows if whole is None else whole)

    def lines(self, lines: Iterable[str]) -> None:
        """Plain lines on stdout (already fitted and painted by the caller)."""
        self.env.stdout.write("".join(line + "\n" for line in lines))
        self.env.stdout.flush()

    def value(self, text: str) -> None:
        """One bare value on stdout in every mode, for `$(yield ...)`: a path, a setting."""
        self._line(text)

    def _machine_object(self, body: Any) -> None:
        if self.mode == "json" and self.env.stdout_isatty:
            self._pretty(body)
        else:
            self._line(dumps(body))

    def columns(self, columns: list, *, title: str | None = None) -> None:
        """A table of ready-made `layout.Column`s, fitted to the terminal like every other table."""
        from yieldcli.cli.render import layout

        self._draw(lambda console: layout.draw(console, columns, title=title))

    def ndjson(self, items: Iterable[dict[str, Any]], line: Callable[[Any], str] = dumps) -> None:
        """One JSON object a line; `line` is exact_json's for the service's own items (the same bytes, faster)."""
        out = self.env.stdout
        for item in items:
            out.write(line(item) + "\n")
        out.flush()

    def csv(self, kind: str, items: Iterable[dict[str, Any]]) -> None:
        self._csv_rows(CSV_COLUMNS[kind], items)

    def _csv_rows(self, columns: Sequence[str], items: Iterable[dict[str, Any]]) -> None:
        writer = csv.writer(self.env.stdout, lineterminator="\n")
        writer.writerow(columns)
        for item in items:
            flat = dict(_flatten(item))
            writer.writerow([_cell(flat.get(column)) for column in columns])
        self.env.stdout.flush()

    def _line(self, text: str) -> None:
        self.env.stdout.write(text + "\n")
        self.env.stdout.flush()

    def _hold(self, items, progress):
        """On a terminal, read every item while the bar runs, then erase the bar: nothing is drawn
        on the screen the bar is on. Piped, items keep streaming as they arrive."""
        if not self.env.stdout_isatty:
            return items
        items = list(items)
        if progress is not None:
            progress.close()
        return items

    def _draw(self, paint) -> None:
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
        pager.show(self.env, drawn.getvalue(), enabled=self.pager)

    def _pretty(self, value: Any) -> None:
        """JSON for a person: indented, coloured when colour is on; integers as exact as piped."""
        from rich.json import JSON

        self._draw(lambda console: console.print(JSON.from_data(value, indent=2, highlight=self.color), soft_wrap=True))

    # --- everything else (stderr) ----------------------------------------------------------------

    def info(self, text: str) -> None:
        if not self.quiet:
            self.env.stderr.write(text + "\n")
            self.env.stderr.flush()

    def warn(self, text: str) -> None:
        self.env.stderr.write(f"{self.paint('warning:', 'yellow')} {text}\n")
        self.env.stderr.flush()

    def paint(self, text: str, colour: str, *, stderr: bool = True) -> str:
        """`text` in a colour that carries meaning (red error, yellow warning, green confirmed),
        only when that stream is a terminal and colour is on; ANSI codes without importing rich."""
        isatty = self.env.stderr_isatty if stderr else self.env.stdout_isatty
        if not self.env.color_enabled(self.color_choice, isatty):
            return text
        return f"\x1b[{_ANSI[colour]}m{text}\x1b[0m"


def _flatten(value: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict) and item and prefix == "" and key != "apy_per_asset":
            yield from _flatten(item, f"{name}.")
        else:
            yield name, item


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return dumps(value)
    return str(value)
