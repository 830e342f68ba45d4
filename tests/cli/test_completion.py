"""Completion asked of the real shells (bash, zsh, fish) with the scripts we ship in `completions/`.

bash and zsh are driven on a terminal (tmux): the line is typed and Tab pressed, and the candidates
are read off the screen. fish answers `complete -C LINE`, its own interface for the same question.
The shells are installed by the README's test command when absent (apt, when run as root).
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.tmux import BIN, TMUX, Screen

COMPLETIONS = Path(__file__).resolve().parents[2] / "completions"
REASON = "{} is not installed (the README's test command installs it with apt-get when run as root)"

CASES = {
    "yield -o ": ["csv", "json", "ndjson", "table"],
    "yield positions --asset ": ["JitoSOL", "USDC", "USDT", "mSOL"],
    "yield deposit -u ": ["devnet", "localhost", "mainnet-beta", "testnet"],
    "yield --profile ": ["alpha", "beta-team"],
    "yield balances --profile ": ["alpha", "beta-team"],  # a global option after the subcommand
    "yield config set ": ["api_url", "rpc_url", "strategy"],
    "yield deposit --commitment ": ["confirmed", "finalized", "processed"],
    "yield --color ": ["always", "auto", "never"],
    "yield completion ": ["bash", "fish", "zsh"],
}


@pytest.fixture
def profiles(isolated):
    config = isolated / ".config" / "yield" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('output = "json"\n[profiles.alpha]\nstrategy = "x"\n[profiles.beta-team]\ncolor = "never"\n')
    return {"HOME": str(isolated), "XDG_CONFIG_HOME": str(isolated / ".config"), "PATH": f"{BIN}:{os.environ['PATH']}"}


def shell_screen(tmp_path, env, shell: list[str], setup: str) -> Screen:
    screen = Screen(tmp_path, width=120, height=50, shell=shell, env=env)
    screen.run(setup)
    return screen


@pytest.mark.skipif(not (TMUX and shutil.which("bash")), reason=REASON.format("tmux or bash"))
def test_bash_completes_values(tmp_path, profiles):
    screen = shell_screen(tmp_path, profiles, ["bash", "--norc", "--noprofile"], f"source {COMPLETIONS / 'yield.bash'}")
    try:
        for line, expected in CASES.items():
            screen.run("true")
            screen.type(line, "Tab", "Tab")
            shown = screen.wait_for(*expected)
            assert all(word in shown.split() for word in expected), shown
            screen.type("", "C-u")
    finally:
        screen.close()


@pytest.mark.skipif(not (TMUX and shutil.which("zsh")), reason=REASON.format("tmux or zsh"))
def test_zsh_completes_values(tmp_path, profiles):
    screen = shell_screen(
        tmp_path,
        {**profiles, "ZDOTDIR": str(tmp_path)},
        ["zsh", "-f"],
        f"PS1='$ '; fpath=({COMPLETIONS} $fpath); autoload -U compinit; compinit -u -d {tmp_path}/zcd",
    )
    try:
        for line, expected in CASES.items():
            screen.run("true")
            screen.type(line, "Tab")
            shown = screen.wait_for(*expected)
            assert all(word in shown.split() for word in expected), shown
            screen.type("", "C-u")
    finally:
        screen.close()


@pytest.mark.skipif(not shutil.which("fish"), reason=REASON.format("fish"))
def test_fish_completes_values(profiles):
    for line, expected in CASES.items():
        script = f"source {COMPLETIONS / 'yield.fish'}; complete -C '{line}'"
        proc = subprocess.run(
            ["fish", "--no-config", "-c", script],
            capture_output=True,
            text=True,
            env={**os.environ, **profiles},
            timeout=60,
        )
        found = [entry.split("\t")[0] for entry in proc.stdout.splitlines()]
        assert set(expected) <= set(found), (line, proc.stdout, proc.stderr)


def test_completion_answers_without_a_shell(run, profiles):
    def ask(*words: str) -> list[str]:
        env = {
            **profiles,
            "_YIELD_COMPLETE": "complete_bash",
            "COMP_WORDS": "\n".join(words),
            "COMP_CWORD": str(len(words) - 1),
        }
        return run(env=env).stdout.split()

    assert ask("yield", "-o", "j") == ["json"]
    assert ask("yield", "--output=n") == ["--output=ndjson"]
    assert ask("yield", "config", "get", "rpc") == ["rpc_url"]
    assert ask("yield", "config", "set", "color", "") == ["auto", "always", "never"]
    assert "--verbose" in ask("yield", "positions", "--v")  # global options after the subcommand
    assert ask("yield", "-vq", "pos") == ["positions"]  # run-together flags are skipped like click does
    assert ask(
        "yield",
        "--profile",
        "",
    ) == ["alpha", "beta-team"]
    # a broken config file gives no names, and no traceback in the shell
    Path(profiles["XDG_CONFIG_HOME"], "yield", "config.toml").write_text("[[[")
    assert ask("yield", "--profile", "") == []
