"""The SDK page's examples type-check under mypy --strict, as a user's project would check them
(`deposit.effect` is optional: the page used it as if it were not), and `Client.from_profile` has a real
signature (a wrong keyword is the caller's error, seen by mypy, naming from_profile) and, with no API
key, fails at construction with a hint instead of at the first request."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from yieldcli import Client
from yieldcli.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "docs" / "manual" / "sdk.md"


def mypy_strict(tmp_path: Path, program: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "example.py"
    source.write_text(program)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent", str(source)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_sdk_pages_examples_type_check_strictly(tmp_path):
    examples = re.findall(r"^```python\n(.*?)^```", SDK.read_text(encoding="utf-8"), flags=re.S | re.M)
    assert len(examples) >= 3
    done = mypy_strict(tmp_path, "\n".join(examples))
    assert done.returncode == 0, done.stdout + done.stderr


def test_from_profile_has_a_signature_mypy_and_python_both_check(tmp_path, monkeypatch):
    done = mypy_strict(tmp_path, 'from yieldcli import Client\n\nClient.from_profile(profile="work")\n')
    assert done.returncode == 1 and 'Unexpected keyword argument "profile"' in done.stdout, done.stdout
    monkeypatch.setenv("YIELD_API_KEY", "test-key-5f1d0c9a7b3e4d2c")
    with pytest.raises(TypeError, match="from_profile") as raised:
        Client.from_profile(profile="work")  # type: ignore[call-arg]
    assert "_Construction" not in str(raised.value)


def test_from_profile_without_a_key_fails_at_construction_with_a_hint(isolated, monkeypatch):
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    with pytest.raises(ConfigError) as raised:
        Client.from_profile()
    assert "no API key for profile 'default'" in raised.value.message and "YIELD_API_KEY" in (raised.value.hint or "")
    with Client.from_profile(api_key="test-key-5f1d0c9a7b3e4d2c") as client:  # a key given is enough
        assert client.api_url.startswith("https://")
