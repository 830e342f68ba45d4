"""The fuzzer's settings, read when the tests are collected (each test then runs in a cleaned environment).

YIELD_FUZZ_CASES    cases to run (default 4000: about 40 s on a quiet core, 80 s on two busy ones)
YIELD_FUZZ_SEED     the seed (default 25): the same seed runs the same cases
YIELD_FUZZ_CASE     run this one case only (its number in a failure's report)
YIELD_FUZZ_FINDINGS a Markdown file each new kind of failing case is appended to
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    cases: range
    seed: int
    findings: str | None

    @classmethod
    def from_env(cls, env: dict[str, str]) -> Settings:
        seed = int(env.get("YIELD_FUZZ_SEED", "25"))
        only = env.get("YIELD_FUZZ_CASE")
        cases = range(int(only), int(only) + 1) if only else range(int(env.get("YIELD_FUZZ_CASES", "4000")))
        return cls(cases, seed, env.get("YIELD_FUZZ_FINDINGS") or None)


SETTINGS = Settings.from_env(dict(os.environ))
