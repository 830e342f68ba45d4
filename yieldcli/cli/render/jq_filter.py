"""`--jq EXPRESSION`: the command's JSON output filtered in-process, as `gh --jq` does.

The command writes its JSON as usual, into memory; when it is done the text goes through jq (the
PyPI `jq` binding of libjq itself, imported only here) and each result is written on a line:
strings raw, everything else as compact JSON. Results come back from jq as JSON text (`tojson`), so
integers beyond 2^53 that the expression passes through stay exact, as they do with the jq command;
converting them to Python numbers on the way would round them through a double.
"""

from __future__ import annotations

import io
import json
from typing import TextIO

from yieldcli.environment import Environment
from yieldcli.errors import UsageError


class JqFilter:
    def __init__(self, expression: str):
        try:
            import jq  # type: ignore[import-not-found]  # ships no type information
        except ImportError as exc:  # a dependency, but a trimmed install may lack it
            raise UsageError("--jq needs the Python package jq", hint="pip install 'jq>=1.6,<2'") from exc
        try:
            jq.compile(expression)  # alone first, so an error's line and column are the user's
            self._program = jq.compile(f"({expression}) | tojson")
        except ValueError as exc:
            raise UsageError(f"invalid --jq expression: {_first_line(exc)}") from exc
        self._env: Environment | None = None
        self._stdout: TextIO | None = None
        self._buffer = io.StringIO()

    def capture(self, env: Environment) -> None:
        """From now on the command's stdout is held in memory, for `finish` to filter."""
        if self._env is None:
            self._env, self._stdout = env, env.stdout
            env.stdout = self._buffer

    def finish(self) -> None:
        """Run the expression over what the command wrote and write the results to stdout."""
        if self._env is None or self._stdout is None:
            return
        env, out = self._env, self._stdout
        env.stdout, self._env = out, None
        text = self._buffer.getvalue()
        if not text.strip():
            return
        try:
            results = self._program.input_text(text).all()
        except ValueError as exc:
            raise UsageError(f"--jq expression failed on the output: {_first_line(exc)}") from exc
        for result in results:
            out.write((json.loads(result) if result.startswith('"') else result) + "\n")
        out.flush()


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].rstrip(":") if text else type(exc).__name__
