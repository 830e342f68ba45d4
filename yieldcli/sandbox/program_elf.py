"""The sandbox strategy program's built file (package data: installing needs no compiler)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

ELF_PATH = Path(__file__).resolve().parent / "program" / "strategy.so"


@cache
def program_elf() -> bytes:
    return ELF_PATH.read_bytes()
