"""The config file names the keypair, the RPC, the service and the strategy program: one that others can
write (the file or a folder above it) is refused (exit 3) as the trusted-destinations file is, by every
command and by `doctor`, which used to call it ok."""

from __future__ import annotations

import pytest

from tests.conftest import TEST_API_KEY


@pytest.fixture
def config(isolated):
    folder = isolated / ".config" / "yield"
    folder.mkdir(parents=True)
    path = folder / "config.toml"
    path.write_text('timeout = "10"\n')
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("which", ["file", "folder"])
def test_a_config_others_can_write_is_refused(api, config, which):
    target = config if which == "file" else config.parent
    target.chmod(target.stat().st_mode | 0o022)
    done = api("health", "-o", "json")
    assert done.code == 3, done.stderr
    line = done.error_lines()[-1]
    assert "can be written by others: refusing to use it" in line and f"chmod go-w {target}" in line, line
    doctor = api("doctor", "-o", "json")  # no longer "ok": the same refusal
    assert doctor.code == 3 and "refusing to use it" in doctor.error_lines()[-1]


def test_a_private_config_is_used(api, config):
    shown = api("config", "show", "-o", "json", env={"YIELD_API_KEY": TEST_API_KEY})
    assert shown.code == 0, shown.stderr
    assert {r["name"]: r["value"] for r in shown.json()}["timeout"] == "10"
