"""The output formats: one class per mode behind the sink (`output.Output`), and `FORMATS`, the one
registry of modes that the sink, completion, `config set output` and the error writer read.

A format decides how each shape of result is written: a page of a resource, many wallets' pages,
one object, an action's report, plain records. Adding a format is adding a class here and listing
it in `FORMATS`. Machine formats are written with the json and csv modules straight to stdout (never
through rich, which wraps long lines); tables are drawn by `tables.py`, imported only when drawn.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from yieldcli.cli.render.text import dumps

if TYPE_CHECKING:
    from rich.console import Console

    from yieldcli.api.pagination import PageResult
    from yieldcli.environment import Environment
    from yieldcli.errors import YieldError


class Sink(Protocol):
    """What a format writes through: the output sink (`output.Output`), named here so that the sink
    can import the formats without the formats importing it back."""

    env: Environment

    def line(self, text: str) -> None: ...
    def lines(self, lines: Iterable[str]) -> None: ...
    def draw(self, paint: Callable[[Console], None]) -> None: ...
    def pretty(self, value: Any) -> None: ...


Rows = Iterable[tuple[str, Any]]  # (wallet, its PageResult) in input order, failures already taken out


class Format:
    """How one mode writes each shape of result; the machine formats share the JSON defaults."""

    name = ""
    errors_as_json = False  # an error is also written as one JSON object on stderr
    for_people = False  # the review, refreshed positions and logs are drawn for a person to read

    def page(self, out: Sink, result: PageResult) -> None:
        raise NotImplementedError

    def wallet_pages(
        self, out: Sink, kind: str, rows: Rows, wallets: int | None, failures: list[tuple[str, YieldError]]
    ) -> None:
        raise NotImplementedError

    def object(self, out: Sink, kind: str, body: Any, typed: Any) -> None:
        self.machine_object(out, body)

    def result(self, out: Sink, body: dict[str, Any], lines: Callable[[], list[str]], kind: str | None) -> None:
        self.machine_object(out, body)

    def report(self, out: Sink, body: dict[str, Any], lines: Callable[[], Iterable[str]]) -> None:
        out.line(dumps(body))  # the shape scripts read, whatever machine format they asked for

    def records(
        self, out: Sink, rows: list[dict[str, Any]], fields: Sequence[str], table: Callable[[], None], whole: Any
    ) -> None:
        self.machine_object(out, rows if whole is None else whole)

    def machine_object(self, out: Sink, body: Any) -> None:
        out.line(dumps(body))


class Table(Format):
    name = "table"
    for_people = True

    def page(self, out: Sink, result: PageResult) -> None:
        draw = table_of(result.kind)
        rows = [typed for _, typed in result.entries]
        out.draw(lambda console: draw(console, rows, result.more_pages))

    def wallet_pages(
        self, out: Sink, kind: str, rows: Rows, wallets: int | None, failures: list[tuple[str, YieldError]]
    ) -> None:
        from yieldcli.cli.render import tables
        from yieldcli.cli.resources import table_of as described

        table = described(kind)
        assert not isinstance(table, str)  # many wallets' results are pages of a resource
        out.draw(lambda console: tables.draw_wallets(console, table, rows))

    def object(self, out: Sink, kind: str, body: Any, typed: Any) -> None:
        draw = table_of(kind)
        out.draw(lambda console: draw(console, typed if typed is not None else body))

    def result(self, out: Sink, body: dict[str, Any], lines: Callable[[], list[str]], kind: str | None) -> None:
        out.lines(lines())

    def report(self, out: Sink, body: dict[str, Any], lines: Callable[[], Iterable[str]]) -> None:
        out.lines(lines())

    def records(
        self, out: Sink, rows: list[dict[str, Any]], fields: Sequence[str], table: Callable[[], None], whole: Any
    ) -> None:
        table()


class Json(Format):
    name = "json"
    errors_as_json = True

    def page(self, out: Sink, result: PageResult) -> None:
        """`{"data": [...], "meta": {...}}`, byte for byte what json.dumps gives, written item by item."""
        if out.env.stdout_isatty:
            out.pretty({"data": [raw for raw, _ in result.entries], "meta": result.meta()})
            return
        stream = out.env.stdout
        stream.write('{"data": [')
        for i, (raw, _) in enumerate(result.entries):
            stream.write((", " if i else "") + dumps(raw))
        stream.write('], "meta": ' + dumps(result.meta()) + "}\n")
        stream.flush()

    def wallet_pages(
        self, out: Sink, kind: str, rows: Rows, wallets: int | None, failures: list[tuple[str, YieldError]]
    ) -> None:
        if out.env.stdout_isatty:
            data = [{"wallet": wallet, **raw} for wallet, result in rows for raw, _ in result.entries]
            meta = {
                "wallets": wallets if wallets is not None else len(data),
                "failed": [w for w, _ in failures],
                "total": len(data),
            }
            out.pretty({"data": data, "meta": meta})
            return
        stream = out.env.stdout
        count = seen = 0
        stream.write('{"data": [')
        for wallet, result in rows:
            seen += 1
            for raw, _ in result.entries:
                stream.write((", " if count else "") + dumps({"wallet": wallet, **raw}))
                count += 1
            stream.flush()
        meta = {"wallets": seen + len(failures), "failed": [w for w, _ in failures], "total": count}
        stream.write('], "meta": ' + dumps(meta) + "}\n")
        stream.flush()

    def machine_object(self, out: Sink, body: Any) -> None:
        if out.env.stdout_isatty:
            out.pretty(body)
        else:
            out.line(dumps(body))


class Ndjson(Format):
    name = "ndjson"
    errors_as_json = True

    def page(self, out: Sink, result: PageResult) -> None:
        from yieldcli.exact_json import dumps_line, dumps_lines, utf8_lines

        # The service's own items: exact_json writes the same bytes as json.dumps, faster; a page
        # at a time when the result comes in pages (one encode and one write for the page). A page
        # may come as records that write their own lines (`api.page_text`), or as those lines, UTF-8.
        if result.pages is None:
            write_ndjson(out, (raw for raw, _ in result.entries), line=dumps_line)
            return
        stream = out.env.stdout
        raw = _utf8_bytes_of(stream)
        pages: Iterable[Any] = result.pages  # lists, PositionsPage, or lines (`amount_fields.add_amounts`)
        for items in pages:
            if not isinstance(items, (list, bytes)):
                items = items.lines()  # a page read as records that no one added amounts to
            if isinstance(items, bytes):
                if raw is None:
                    stream.write(items.decode("utf-8"))
                    stream.flush()
                else:
                    raw.write(items)
                    raw.flush()
                continue
            encoded = utf8_lines(items) if raw is not None else None
            if encoded is None:
                stream.write(dumps_lines(items))
                stream.flush()
            else:
                raw.write(encoded)
                raw.flush()

    def wallet_pages(
        self, out: Sink, kind: str, rows: Rows, wallets: int | None, failures: list[tuple[str, YieldError]]
    ) -> None:
        stream = out.env.stdout
        for wallet, result in rows:
            for raw, _ in result.entries:
                stream.write(dumps({"wallet": wallet, **raw}) + "\n")
            stream.flush()
        stream.flush()

    def records(
        self, out: Sink, rows: list[dict[str, Any]], fields: Sequence[str], table: Callable[[], None], whole: Any
    ) -> None:
        write_ndjson(out, rows)


class Csv(Format):
    name = "csv"

    def page(self, out: Sink, result: PageResult) -> None:
        write_csv(out, columns_of(result.kind), (raw for raw, _ in result.entries))

    def wallet_pages(
        self, out: Sink, kind: str, rows: Rows, wallets: int | None, failures: list[tuple[str, YieldError]]
    ) -> None:
        import csv

        writer = csv.writer(out.env.stdout, lineterminator="\n")
        columns = columns_of(kind)
        writer.writerow(("wallet", *columns))
        for wallet, result in rows:
            for raw, _ in result.entries:
                flat = dict(_flatten(raw))
                writer.writerow([wallet, *(_cell(flat.get(c)) for c in columns)])
            out.env.stdout.flush()

    def object(self, out: Sink, kind: str, body: Any, typed: Any) -> None:
        write_csv(out, columns_of(kind), [body if isinstance(body, dict) else {"status": body}])

    def result(self, out: Sink, body: dict[str, Any], lines: Callable[[], list[str]], kind: str | None) -> None:
        write_csv(out, columns_of(kind) if kind else tuple(body), [body])

    def records(
        self, out: Sink, rows: list[dict[str, Any]], fields: Sequence[str], table: Callable[[], None], whole: Any
    ) -> None:
        write_csv(out, fields, rows)


# The one registry of output modes, in the order help and completion list them.
FORMATS: dict[str, Format] = {f.name: f for f in (Table(), Json(), Ndjson(), Csv())}
MODES = tuple(FORMATS)
MODES_TEXT = ", ".join(MODES[:-1]) + " or " + MODES[-1]  # for help texts: "table, json, ndjson or csv"


def columns_of(kind: str) -> tuple[str, ...]:
    """The stable CSV columns of a kind of result (its resource descriptor's, or a command's own)."""
    from yieldcli.cli.resources import csv_columns

    return csv_columns(kind)


def table_of(kind: str) -> Callable[..., None]:
    """The drawer of a kind: `(console, rows, more_pages)` for a page, `(console, body)` for an object."""
    from yieldcli.cli.render import tables
    from yieldcli.cli.resources import table_of as described

    table = described(kind)
    if isinstance(table, str):
        drawer: Callable[..., None] = getattr(tables, table)
        return drawer
    return lambda console, rows, more_pages: tables.draw_page(console, rows, more_pages, table)


def _utf8_bytes_of(stream: Any) -> Any:
    """The binary stream under a UTF-8 text stream that writes "\n" as is (flushed, so what was
    written before comes first), or None: text made of UTF-8 bytes is then written as those bytes,
    without decoding them into text to have them encoded again."""
    binary = getattr(stream, "buffer", None)
    encoding = getattr(stream, "encoding", None)
    if binary is None or not encoding or os.linesep != "\n" or codecs.lookup(encoding).name != "utf-8":
        return None
    stream.flush()
    return binary


def write_ndjson(out: Sink, items: Iterable[dict[str, Any]], line: Callable[[Any], str] = dumps) -> None:
    """One JSON object a line."""
    stream = out.env.stdout
    for item in items:
        stream.write(line(item) + "\n")
    stream.flush()


def write_csv(out: Sink, columns: Sequence[str], items: Iterable[dict[str, Any]]) -> None:
    import csv  # on first use, as json: the registry is read at start-up by help and completion

    writer = csv.writer(out.env.stdout, lineterminator="\n")
    writer.writerow(columns)
    for item in items:
        flat = dict(_flatten(item))
        writer.writerow([_cell(flat.get(column)) for column in columns])
    out.env.stdout.flush()


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
