"""`yield` ends without the interpreter's teardown, and loses nothing by it: what must run at exit
runs, what was written arrives, threads finish, the status is the command's."""

import subprocess
import sys
import textwrap

import pytest

# A process that ends as `yield` does (`quick_exit` armed first), with work of every kind left for
# the exit: an exit function, unflushed output, a thread still running, an object freed at teardown.
SCRIPT = textwrap.dedent(
    """
    import atexit, sys, threading, time
    from yieldcli.cli import quick_exit
    {before}
    armed = quick_exit.arm()

    class Torn:
        def __del__(self):
            sys.stderr.write("torn down\\n")  # only a full teardown frees this before the end

    kept = Torn()
    atexit.register(lambda: sys.stdout.write("exit function ran\\n"))

    def late():
        time.sleep(0.2)
        sys.stdout.write("thread finished\\n")

    threading.Thread(target=late).start()
    sys.stdout.write("x" * 200_000 + "\\n")  # more than any buffer: the end must flush the rest
    sys.stdout.write(f"armed {{armed}}\\n")
    quick_exit.ended({code})
    sys.exit({code})
    """
)


def _run(code: object = 7, before: str = "") -> subprocess.CompletedProcess[str]:
    script = SCRIPT.format(code=code, before=before)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)


def test_the_quick_end_runs_exit_functions_waits_for_threads_and_flushes_output():
    done = _run(7)
    assert done.returncode == 7
    lines = done.stdout.splitlines()
    assert lines[0] == "x" * 200_000
    assert lines[1:] == ["armed True", "thread finished", "exit function ran"]
    assert "torn down" not in done.stderr  # the teardown was skipped: the point of it


def test_an_exit_function_registered_first_keeps_the_usual_ending():
    done = _run(3, before="atexit.register(lambda: sys.stdout.write('registered first\\n'))")
    assert done.returncode == 3
    assert done.stdout.splitlines()[1:] == ["armed False", "thread finished", "exit function ran", "registered first"]
    assert "torn down" in done.stderr


def test_a_status_that_is_not_a_number_ends_the_usual_way():
    done = _run("'a message'")
    assert done.returncode == 1 and "a message" in done.stderr and "torn down" in done.stderr


@pytest.mark.process
def test_yield_leaves_with_the_command_status_and_every_line(run):
    listed = run("--sandbox", "balances", "--all", "-o", "ndjson")
    whole = run("--sandbox", "balances", "--all", "-o", "json").json()
    assert listed.code == 0 and len(listed.stdout.splitlines()) == whole["meta"]["total"] == 15
    refused = run("positions", "--page", "0")
    assert refused.code == 2 and "--page" in refused.stderr
