"""The install the README documents: a wheel built from this tree runs as `yield` in a fresh
environment (what `pipx install` makes), type checkers see the package after the documented
editable install, and pyproject.toml says what an index shows and bounds every dependency."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

# The user file a type checker reads: it uses the library's typed API.
USER_CODE = """from yieldcli import Client


def name(client: Client, strategy_id: str) -> str:
    return client.strategy(strategy_id).strategy_name
"""


@pytest.fixture(scope="module")
def dependencies(tmp_path_factory) -> Path:
    """This environment's installed packages, less this tree's own install: installing them again from
    an index would test the index, not the package."""
    folder = tmp_path_factory.mktemp("dependencies")
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(("yieldcli", "__editable__")) and entry.suffix != ".pth":
            (folder / entry.name).symlink_to(entry)
    return folder


def fresh_venv(path: Path, dependencies: Path) -> Path:
    """A new environment with nothing of this tree in it, the dependencies reachable behind its own
    site-packages; its python."""
    venv.EnvBuilder(with_pip=False).create(path)
    python = path / "bin" / "python"
    site = outside(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip()
    (Path(site) / "dependencies.pth").write_text(f"{dependencies}\n")
    return python


def outside(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """A command that sees nothing of this tree but what was installed (the tests' PYTHONPATH names it,
    and its metadata there would pass for an install)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(list(args), capture_output=True, text=True, env=env, **kwargs)


def pip(*args: str) -> None:
    done = outside(sys.executable, "-m", "pip", "-q", *args, cwd=ROOT)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    pip("wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(ROOT))
    (built,) = out.glob("yieldcli-*.whl")
    return built


def test_the_wheel_installs_and_runs_as_yield(wheel, dependencies, tmp_path):
    python = fresh_venv(tmp_path / "env", dependencies)
    pip("--python", str(python), "install", "--no-deps", str(wheel))
    version = outside(str(tmp_path / "env" / "bin" / "yield"), "--version")
    assert version.returncode == 0, version.stderr
    assert re.fullmatch(r"yield \S+\n", version.stdout)
    where = outside(str(python), "-c", "import yieldcli; print(yieldcli.__file__)", cwd=tmp_path)
    assert where.stdout.startswith(str(tmp_path / "env"))  # the wheel's copy, not this tree
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert "yieldcli/py.typed" in names and "yieldcli/sandbox/program/strategy.so" in names


def test_mypy_sees_the_package_after_the_documented_editable_install(dependencies, tmp_path):
    readme = (ROOT / "README.md").read_text()
    assert "pip install -q -e . --config-settings editable_mode=compat" in readme  # the install the README gives
    python = fresh_venv(tmp_path / "env", dependencies)
    pip("--python", str(python), "install", "--no-deps", "--no-build-isolation", "-e", str(ROOT),
        "--config-settings", "editable_mode=compat")  # fmt: skip
    user = tmp_path / "user.py"
    user.write_text(USER_CODE)
    checked = outside(
        sys.executable, "-m", "mypy", "--strict", "--python-executable", str(python), "--no-incremental", str(user),
        cwd=tmp_path,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout


def test_pyproject_says_what_an_index_shows_and_bounds_every_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["keywords"] and project["urls"]
    assert "Typing :: Typed" in project["classifiers"] and "Environment :: Console" in project["classifiers"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    unbounded = [r for r in requirements if not ("==" in r or (">=" in r and "<" in r))]
    assert not unbounded
