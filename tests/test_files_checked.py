"""Files an agent's tools may reach, opened once and judged on the descriptor (`yieldcli.files`): the
send journal and the trusted destinations refuse a FIFO, a symlink or a hard link in their place, at
once and naming the path; a lock never creates a file where a symlink points. And the parts of a URL
that may hold a key, in every form a server may echo them (`yieldcli.urls`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.mcp.harness import bounded
from yieldcli.chain.transact.journal import Journal, new_entry
from yieldcli.errors import ConfigError
from yieldcli.files import take_file_lock
from yieldcli.trust import load_trusted
from yieldcli.urls import scrub, url_secrets


def fifo(path: Path) -> None:
    os.mkfifo(path, 0o600)


def symlink(path: Path) -> None:
    target = path.with_name("elsewhere.json")
    target.write_text("[]")
    path.symlink_to(target)


def hard_link(path: Path) -> None:
    target = path.with_name("elsewhere.json")
    target.write_text("[]")
    os.chmod(target, 0o600)
    os.link(target, path)


PLACED = {"fifo": (fifo, "named pipe"), "symlink": (symlink, "symbolic link"), "hard-link": (hard_link, "hard links")}


@pytest.mark.parametrize("kind", PLACED)
def test_a_journal_that_is_not_one_regular_file_of_ours_is_refused_at_once_naming_it(tmp_path, kind):
    place, why = PLACED[kind]
    path = tmp_path / "in-flight.json"
    place(path)
    journal = Journal(path)
    for step in (journal.entries, lambda: journal.add(new_entry("s", "g", 1, "deposit", "w"))):
        with pytest.raises(ConfigError) as refused:
            bounded(step)
        assert str(path) in refused.value.message and why in refused.value.message, refused.value.message
    if kind != "fifo":
        assert path.with_name("elsewhere.json").read_text() == "[]"  # never written through


def test_a_journal_lock_that_is_a_symlink_creates_nothing_where_it_points(tmp_path):
    profile = tmp_path / "home" / ".bash_profile"
    profile.parent.mkdir(exist_ok=True)
    path = tmp_path / "in-flight.json"
    path.with_name("in-flight.json.lock").symlink_to(profile)
    with pytest.raises(ConfigError) as refused:
        bounded(Journal(path).entries)
    assert "in-flight.json.lock" in refused.value.message
    assert not profile.exists()
    with pytest.raises(OSError):
        take_file_lock(path.with_name("in-flight.json.lock"))


TRUST = """\
[[trusted]]
cluster = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
strategy = "s"
destination = "8xYLtxxq7YLtxxq7YLtxxq7YLtxxq7YLtxxq7YLtxxq7"
mint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
"""


@pytest.mark.parametrize("kind", ["fifo", "hard-link"])
def test_a_trust_file_that_is_a_fifo_or_has_a_second_name_is_refused_at_once(tmp_path, kind):
    folder = tmp_path / "config"
    folder.mkdir(mode=0o700)
    path = folder / "trusted-destinations.toml"
    if kind == "fifo":
        fifo(path)
    else:
        path.write_text(TRUST)
        os.chmod(path, 0o600)
        assert len(load_trusted(path)) == 1
        os.link(path, tmp_path / "reachable.toml")
    with pytest.raises(ConfigError) as refused:
        bounded(lambda: load_trusted(path))
    assert str(path) in refused.value.message and PLACED[kind][1] in refused.value.message


URL = "https://alice:S3cretPass@rpc.example:8899/v2/PathKey123/t?api-key=QueryKey456&x=1#FragKey789"


def test_every_part_of_a_url_but_scheme_host_and_port_is_a_secret_in_every_form():
    hidden = url_secrets(URL)
    for part in ("alice", "S3cretPass", "PathKey123", "QueryKey456", "api-key=QueryKey456", "FragKey789"):
        assert part in hidden, part
    assert "rpc.example" not in hidden and "8899" not in hidden
    echoed = (
        "provider says: bad key QueryKey456 for /v2/PathKey123/t (user alice:S3cretPass), "
        "b64 UXVlcnlLZXk0NTY=, hex 51756572794b6579343536, frag FragKey789, at rpc.example:8899"
    )
    shown = scrub(echoed, URL)
    for part in ("QueryKey456", "PathKey123", "alice", "S3cretPass", "UXVlcnlLZXk0NTY", "51756572794b6579343536"):
        assert part not in shown, (part, shown)
    assert "FragKey789" not in shown and "rpc.example:8899" in shown


def test_a_verbose_line_shows_no_key_no_part_of_either_url_and_not_the_keypairs_path(tmp_path):
    """`-v` lines carry text from the service, the RPC and the system (a failed resend's error, a
    retry's reason): whoever wrote it, the line is scrubbed of what this run holds secret."""
    import io

    from yieldcli.cli.session import GlobalOptions, Session
    from yieldcli.environment import Environment

    keypair = tmp_path / "keys" / "id.json"
    service = "https://svc.example/t/SvcPathKey-e5f6?token=SvcQueryKey-g7h8"
    variables = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "YIELD_API_URL": service,
        "YIELD_API_KEY": "ApiKey-0123456789abcdef",
        "YIELD_KEYPAIR": str(keypair),
    }
    stderr = io.StringIO()
    session = Session(
        Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=stderr, vars=variables),
        GlobalOptions(verbose=True),
    )
    session.service()
    session.rpc_url(URL)
    session.keypair_source(None)
    session.log(
        "resend failed: bad key QueryKey456 in /v2/PathKey123/t for alice:S3cretPass; service said "
        f"SvcPathKey-e5f6 SvcQueryKey-g7h8 ApiKey-0123456789abcdef; cannot read {keypair}: gone"
    )
    line = stderr.getvalue().splitlines()[-1]
    assert line.startswith("[yield] resend failed: bad key")
    for secret in ("QueryKey456", "PathKey123", "S3cretPass", "SvcPathKey", "SvcQueryKey", "ApiKey-0123", str(keypair)):
        assert secret not in line, (secret, line)
