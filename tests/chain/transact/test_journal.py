"""The journal of sent transactions, shared by several processes at once."""

import json
import multiprocessing

import pytest

from yieldcli.chain.transact.journal import Journal, new_entry
from yieldcli.errors import ConfigError, ExitCode

WRITERS = 8
PER_WRITER = 20


def _writer(path: str, writer: int, start) -> None:
    journal = Journal(__import__("pathlib").Path(path))
    start.wait()
    for i in range(PER_WRITER):
        journal.add(new_entry(f"sig-{writer}-{i}", "genesis", 100 + i, "deposit", f"wallet-{writer}"))
        if i % 2:
            journal.remove(f"sig-{writer}-{i - 1}")  # every even entry goes again: adds and removes interleave


def test_eight_processes_adding_and_removing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "in-flight.json"
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(str(path), w, start)) for w in range(WRITERS)]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    kept = {e.signature for e in Journal(path).entries()}
    expected = {f"sig-{w}-{i}" for w in range(WRITERS) for i in range(PER_WRITER) if i % 2}
    assert kept == expected  # 80 of 160 added, the 80 removed ones gone, none lost, none torn
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary file left behind


def _claimer(path: str, writer: int, start, results) -> None:
    journal = Journal(__import__("pathlib").Path(path))
    start.wait()
    others = journal.claim(new_entry(f"claim-{writer}", "genesis", 100, "deposit", "one-wallet"))
    results.put((writer, [o.signature for o in others]))


def test_of_eight_processes_claiming_one_wallet_exactly_one_wins(tmp_path):
    path = tmp_path / "in-flight.json"
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_claimer, args=(str(path), w, start, results)) for w in range(WRITERS)]
    for proc in procs:
        proc.start()
    start.set()
    answers = dict(results.get(timeout=120) for _ in procs)
    for proc in procs:
        proc.join(120)
    winners = [w for w, others in answers.items() if not others]
    assert len(winners) == 1
    assert [e.signature for e in Journal(path).entries()] == [f"claim-{winners[0]}"]
    assert all(others == [f"claim-{winners[0]}"] for w, others in answers.items() if w != winners[0])


def test_entries_are_kept_apart_by_cluster_and_wallet(tmp_path):
    journal = Journal(tmp_path / "j.json")
    journal.add(new_entry("a", "mainnet", 1, "deposit", "w1"))
    journal.add(new_entry("b", "devnet", 1, "deposit", "w1"))
    journal.add(new_entry("c", "mainnet", 1, "deposit", "w2"))
    assert [e.signature for e in journal.entries("mainnet", "w1")] == ["a"]
    assert journal.claim(new_entry("d", "devnet", 1, "deposit", "w2")) == []
    assert [e.signature for e in journal.claim(new_entry("e", "mainnet", 1, "withdraw", "w2"))] == ["c"]
    assert journal.find("e") is None and journal.find("d") is not None
    assert [e.signature for e in journal.claim(new_entry("d", "devnet", 1, "deposit", "w2"))] == [
        "d"
    ]  # the same one, elsewhere
    journal.remove("a", "b")
    assert sorted(e.signature for e in journal.entries()) == ["c", "d"]


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"a": 1}',
        b'[{"signature": "x"}]',
        b"\xff\xfe",
        b"[1, 2]",
        json.dumps(
            [
                {
                    "signature": "x",
                    "cluster": "g",
                    "last_valid_block_height": "9",
                    "action": "deposit",
                    "wallet": "w",
                    "sent_at": 1.0,
                }
            ]
        ).encode(),
    ],
)
def test_a_damaged_journal_is_an_error_naming_the_file_never_empty(tmp_path, content):
    path = tmp_path / "in-flight.json"
    path.write_bytes(content)
    journal = Journal(path)
    for attempt in (journal.entries, lambda: journal.add(new_entry("s", "g", 1, "deposit", "w"))):
        with pytest.raises(ConfigError) as raised:
            attempt()
        assert str(path) in raised.value.message and raised.value.exit_code == ExitCode.CONFIG
    assert path.read_bytes() == content  # never overwritten: it may list transactions that could still land


def test_an_unreadable_journal_is_an_error_too(tmp_path):
    path = tmp_path / "in-flight.json"
    path.mkdir()  # unreadable as a file, whoever runs the test
    with pytest.raises(ConfigError) as raised:
        Journal(path).entries()
    assert str(path) in raised.value.message
