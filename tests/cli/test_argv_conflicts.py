"""Global options of which one would be ignored are refused before anything runs (exit 2): `--sandbox`
never reaches the --api-url given beside it, and `-vq` asks for more and less at once."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "args",
    [
        ["--sandbox", "--api-url", "http://127.0.0.1:9", "health"],
        ["--api-url", "http://127.0.0.1:9", "--sandbox", "health"],
        ["health", "--sandbox", "--api-url", "http://127.0.0.1:9"],
        ["-vq", "--sandbox", "health"],
        ["--sandbox", "health", "-v", "--quiet"],
    ],
)
def test_conflicting_global_options_are_refused(run, args):
    done = run(*args, "-o", "json")
    assert done.code == 2, done.stderr
    line = done.error_lines()[-1]
    assert "cannot be used together" in line and "hint: drop one of" in line, line
    assert done.stdout == ""


def test_each_alone_still_works(run):
    assert run("--sandbox", "-q", "health", "-o", "json").code == 0
    assert run("--sandbox", "-v", "health", "-o", "json").code == 0
