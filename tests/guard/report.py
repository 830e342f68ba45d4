"""Failing cases for people: one of each kind, in the test's failure message and in a findings file."""

from __future__ import annotations

from pathlib import Path

from tests.guard.fuzzer import Failure, Tally


def distinct(failures: list[Failure]) -> list[Failure]:
    """The first failing case of each kind (action and mutation operators)."""
    seen: dict[tuple[str, ...], Failure] = {}
    for failure in failures:
        seen.setdefault(failure.kind(), failure)
    return list(seen.values())


def message(tally: Tally, limit: int = 12) -> str:
    kinds = distinct(tally.failures)
    lines = [tally.summary(), f"{len(kinds)} kinds of failing case; the first of each (up to {limit}):", ""]
    for failure in kinds[:limit]:
        lines += [failure.text(), ""]
    lines.append(
        "Run one again: YIELD_FUZZ_SEED=<seed> YIELD_FUZZ_CASE=<case> pytest tests/chain/guard/test_guard_fuzz.py"
    )
    return "\n".join(lines)


def append_findings(path: str, tally: Tally, against: str) -> int:
    """Add each kind of failing case not in the file yet; returns how many were added."""
    file = Path(path)
    known = file.read_text() if file.exists() else ""
    added = []
    for failure in distinct(tally.failures):
        marker = f"kind: {' + '.join(failure.kind())}"
        if marker not in known:
            added.append(f"### {marker}\n\nAgainst {against}.\n\n```\n{failure.text()}\n```\n")
    if added:
        with file.open("a") as out:
            out.write("\n".join(added) + "\n")
    return len(added)
