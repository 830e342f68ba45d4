"""Loading signers: files, stdin, and every way a keypair file can be wrong, without leaking key bytes."""

from __future__ import annotations

import io
import json
import os

import pytest
from solders.keypair import Keypair

from yieldcli.chain.keys.keypairs import load_keypair, public_key_text
from yieldcli.errors import ConfigError, ExitCode, UsageError


@pytest.fixture
def keypair():
    return Keypair()


def write(path, text, mode=0o600):
    path.write_text(text)
    os.chmod(path, mode)
    return path


def secret_texts(kp: Keypair) -> list[str]:
    raw = list(bytes(kp))
    return [json.dumps(raw), ",".join(map(str, raw[:8])), bytes(kp).hex()[:16]]


def assert_no_secret(message: str, kp: Keypair) -> None:
    for text in secret_texts(kp):
        assert text not in message


def test_loads_a_solana_keygen_file(tmp_path, keypair):
    path = write(tmp_path / "id.json", keypair.to_json())
    loaded = load_keypair(str(path))
    assert loaded.keypair == keypair
    assert loaded.warning is None
    assert public_key_text(str(path)) == str(keypair.pubkey())


def test_expands_home(tmp_path, keypair, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    write(tmp_path / "id.json", keypair.to_json())
    assert load_keypair("~/id.json").keypair == keypair


@pytest.mark.parametrize("source", ["-", "stdin:"])
def test_reads_stdin(keypair, source):
    loaded = load_keypair(source, stdin=io.StringIO(keypair.to_json() + "\n"))
    assert loaded.keypair == keypair
    assert loaded.warning is None


def test_empty_stdin(keypair):
    with pytest.raises(ConfigError, match="no keypair on standard input"):
        load_keypair("-", stdin=io.StringIO(""))


def test_warns_when_others_can_read(tmp_path, keypair):
    path = write(tmp_path / "id.json", keypair.to_json(), mode=0o644)
    loaded = load_keypair(str(path))
    assert loaded.keypair == keypair
    assert "0644" in loaded.warning and "chmod 600" in loaded.warning and str(path) in loaded.warning


def test_group_readable_also_warns(tmp_path, keypair):
    path = write(tmp_path / "id.json", keypair.to_json(), mode=0o640)
    assert load_keypair(str(path)).warning is not None


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_keypair(str(tmp_path / "nope.json"))
    assert "does not exist" in info.value.message
    # The library names no flag; the command line's table adds the hint by kind.
    from yieldcli.cli.cli_errors import hint_for

    assert info.value.kind == "config.keypair.missing" and "solana-keygen new" in hint_for(info.value)
    assert info.value.exit_code == ExitCode.CONFIG


def test_directory(tmp_path):
    with pytest.raises(ConfigError, match="is a directory"):
        load_keypair(str(tmp_path))


def test_unreadable(tmp_path, keypair, monkeypatch):
    # Simulated: the tests may run as root, who reads any file whatever its mode.
    path = write(tmp_path / "id.json", keypair.to_json(), mode=0o000)

    real_open = os.open

    def refuse(name, *args, **kwargs):
        if os.fspath(name) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(ConfigError, match="permission denied") as info:
        load_keypair(str(path))
    assert "ls -l" in info.value.hint


def test_not_json(tmp_path, keypair):
    # A truncated file: the JSON decoder's own message would quote the numbers.
    path = write(tmp_path / "id.json", keypair.to_json()[:-5])
    with pytest.raises(ConfigError, match="is not JSON") as info:
        load_keypair(str(path))
    assert_no_secret(str(info.value), keypair)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_not_an_array(tmp_path):
    path = write(tmp_path / "id.json", '{"secret": 1}')
    with pytest.raises(ConfigError, match="JSON dict"):
        load_keypair(str(path))


def test_wrong_length(tmp_path, keypair):
    path = write(tmp_path / "id.json", json.dumps(list(bytes(keypair))[:32]))
    with pytest.raises(ConfigError, match="holds 32 numbers; a solana-keygen keypair has exactly 64") as info:
        load_keypair(str(path))
    assert_no_secret(str(info.value), keypair)


@pytest.mark.parametrize("bad", [256, -1, 1.5, "7", True])
def test_bad_bytes(tmp_path, keypair, bad):
    values = list(bytes(keypair))
    values[10] = bad
    path = write(tmp_path / "id.json", json.dumps(values))
    with pytest.raises(ConfigError, match="not bytes") as info:
        load_keypair(str(path))
    assert_no_secret(str(info.value), keypair)


def test_public_half_mismatch(tmp_path, keypair):
    values = list(bytes(keypair))[:32] + list(bytes(Keypair().pubkey()))
    path = write(tmp_path / "id.json", json.dumps(values))
    with pytest.raises(ConfigError, match="does not match") as info:
        load_keypair(str(path))
    assert_no_secret(str(info.value), keypair)


def test_bad_stdin_names_stdin(keypair):
    with pytest.raises(ConfigError, match="standard input holds 3 numbers"):
        load_keypair("-", stdin=io.StringIO("[1,2,3]"))


@pytest.mark.parametrize("source", ["prompt:", "usb://ledger"])
def test_unsupported_sources(source):
    with pytest.raises(UsageError, match="unsupported keypair source"):
        load_keypair(source)
