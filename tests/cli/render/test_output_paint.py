"""`Output.paint` on stdout: what `confirmed SIG in slot N` is painted with. Green on a terminal,
plain when piped, with NO_COLOR or --color never; stdout's terminal decides, not stderr's."""

import io

import pytest

from yieldcli.cli.render.output import Output
from yieldcli.environment import Environment


class Tty(io.StringIO):
    def isatty(self):
        return True


GREEN = "\x1b[32mconfirmed\x1b[0m"


@pytest.mark.parametrize(
    "stdout, stderr, variables, choice, painted",
    [
        (Tty, io.StringIO, {}, "auto", True),  # a person reads stdout; stderr redirected does not matter
        (io.StringIO, Tty, {}, "auto", False),  # stdout piped: the line stays plain for the program reading it
        (Tty, Tty, {"NO_COLOR": "1"}, "auto", False),
        (Tty, Tty, {}, "never", False),
        (Tty, Tty, {"TERM": "dumb"}, "auto", False),
        (io.StringIO, io.StringIO, {}, "always", True),
        (io.StringIO, io.StringIO, {"FORCE_COLOR": "1"}, "auto", True),
    ],
)
def test_confirmed_is_green_only_where_colour_is_wanted(stdout, stderr, variables, choice, painted):
    env = Environment(stdin=io.StringIO(), stdout=stdout(), stderr=stderr(), vars={"TERM": "xterm", **variables})
    out = Output(env, "table", color=painted, color_choice=choice)
    assert out.paint("confirmed", "green", stderr=False) == (GREEN if painted else "confirmed")
