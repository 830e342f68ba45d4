"""The policy's rules, as `decide` applies them to one write given what the audit log holds, and the
files `load_policy` refuses."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.mcp.harness import POLICY, write_private
from yieldcli.errors import ConfigError, Refused
from yieldcli.mcp.audit import AuditLog
from yieldcli.mcp.policy import Budget, Policy, decide, load_policy

USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
SOL = "So11111111111111111111111111111111111111112"


@pytest.fixture
def policy(tmp_path) -> Policy:
    return load_policy(write_private(tmp_path / "p" / "policy.toml", POLICY), required=True)


@pytest.mark.parametrize(
    "action, mint, raw, budget, verdict, reason",
    [
        ("deposit", USDC, 2_000_000, Budget(), "auto", "within the automatic limits"),
        ("deposit", USDC, 2_000_001, Budget(), "approval", "above the automatic limits"),
        ("deposit", USDC, 1_000_000, Budget(day=9_500_000, auto_day=9_500_000), "approval", "above the automatic"),
        ("deposit", USDC, 20_000_001, Budget(), "refused", "above the per-call limit of 20"),
        ("deposit", USDC, 1_000_000, Budget(day=99_500_000), "refused", "pass the 24-hour limit of 100"),
        ("withdraw", USDC, 1_000_000, Budget(writes_last_hour=50), "refused", "50 write(s) an hour"),
        ("close-account", USDC, 0, Budget(), "approval", "always needs your approval"),
        ("deposit", SOL, 1, Budget(), "refused", "does not allow this asset"),
    ],
)
def test_decide(policy, action, mint, raw, budget, verdict, reason):
    decision = decide(policy, action, mint, raw, budget)
    assert decision.verdict == verdict and reason in decision.reason


def test_no_policy_file_is_writes_off_and_the_kill_switch_beats_everything(tmp_path):
    assert (
        decide(load_policy(tmp_path / "none.toml", required=False), "deposit", USDC, 1, Budget()).verdict == "refused"
    )
    killed = load_policy(write_private(tmp_path / "k" / "p.toml", "kill_switch = true\n" + POLICY), required=True)
    assert decide(killed, "deposit", USDC, 1, Budget()).reason == "the policy's kill switch is on"
    only_deposits = load_policy(
        write_private(
            tmp_path / "d" / "p.toml", POLICY.replace('["deposit", "withdraw", "close-account"]', '["deposit"]')
        ),
        required=True,
    )
    assert "does not allow withdraw" in decide(only_deposits, "withdraw", USDC, 1, Budget()).reason


@pytest.mark.parametrize(
    "text, message",
    [
        (POLICY.replace('per_call = "20"', "per_call = 20.5"), "must be a decimal string"),
        (POLICY + "\n[assets.NOPE]\n", "unknown asset 'NOPE'"),
        (POLICY.replace('per_call = "20"', 'per_call = "20.0000001"'), "per_call"),
        ("writes = 1\n", "writes must be true or false"),
        ("writes = true\nallow_everything = true\n", "unknown setting(s) allow_everything"),
    ],
)
def test_a_bad_policy_is_refused_naming_what_is_wrong(tmp_path, text, message):
    with pytest.raises(ConfigError, match="invalid policy") as info:
        load_policy(write_private(tmp_path / "p" / "p.toml", text), required=True)
    assert message in str(info.value)


@pytest.mark.parametrize("mode, folder_mode", [(0o620, 0o700), (0o602, 0o700), (0o600, 0o770)])
def test_a_policy_others_can_write_is_refused(tmp_path, mode, folder_mode):
    path = write_private(tmp_path / "p" / "p.toml", POLICY)
    os.chmod(path, mode)
    os.chmod(path.parent, folder_mode)
    with pytest.raises(ConfigError, match="can be written by others"):
        load_policy(path, required=True)


def test_the_budget_counts_reservations_until_released_within_their_windows(tmp_path):
    now = [1_000_000.0]
    log = AuditLog(Path(tmp_path) / "audit.jsonl", tmp_path / "seal", clock=lambda: now[0])
    log.append("reserved", proposal="a", mint=USDC, raw=5, automatic=True)
    log.append("reserved", proposal="b", mint=USDC, raw=7, automatic=False)
    log.append("reserved", proposal="c", mint=SOL, raw=100, automatic=True)
    log.append("released", proposal="b", why="expired")
    assert log.budget(USDC) == (5, 5, 2)
    now[0] += 2 * 3600  # out of the hour, still in the day
    assert log.budget(USDC) == (5, 5, 0)
    now[0] += 23 * 3600  # out of the day
    assert log.budget(USDC) == (0, 0, 0)
    assert log.verify() is None and oct(os.stat(log.path).st_mode & 0o777) == "0o600"


def test_a_proposal_past_its_expiry_cannot_be_executed(tmp_path, policy):
    from yieldcli.errors import Refused
    from yieldcli.mcp.policy import Decision
    from yieldcli.mcp.proposals import PROPOSAL_SECONDS, AgentAsk, Book, Proposal

    now = [1_000.0]
    book = Book(None, policy, AuditLog(tmp_path / "audit.jsonl", tmp_path / "seal"), clock=lambda: now[0])
    for name in ("fresh", "stale"):
        book._proposals[name] = Proposal(
            name,
            AgentAsk("deposit", "USDC", "1"),
            USDC,
            1_000_000,
            "deposit 1 USDC",
            5000,
            Decision("auto", "within"),
            now[0] + PROPOSAL_SECONDS,
        )
    assert book.claim("fresh").state == "executing"
    now[0] += PROPOSAL_SECONDS + 1
    with pytest.raises(Refused, match="is expired") as info:
        book.claim("stale")
    assert info.value.kind == "refused.proposal_expired"


def test_a_line_still_being_appended_is_not_read_yet_but_a_torn_log_takes_no_more(tmp_path):
    # A read takes no lock: another server's append, half written, must not make the log look damaged.
    log = AuditLog(Path(tmp_path) / "audit.jsonl", tmp_path / "seal")
    log.append("prepare", intent={"action": "deposit"})
    log.append("execute", proposal="p1", approved=True)
    whole = log.path.read_bytes()
    with open(log.path, "ab") as handle:
        handle.write(b'{"seq":3,"time":1.0,"event":"reser')
    assert [e["seq"] for e in log.entries()] == [1, 2] and log.verify() is None
    # Under the lock nobody else is writing: the cut line is damage, and nothing is appended after it.
    with pytest.raises(Refused, match="entry 3 is cut short"):
        log.append("released", proposal="p1", why="test")
    assert log.path.read_bytes() == whole + b'{"seq":3,"time":1.0,"event":"reser'


def test_others_can_change_judges_the_file_a_symlink_leads_to_and_every_folder_above_it(tmp_path):
    from yieldcli.files import others_can_change

    shared = tmp_path / "shared"
    real = write_private(shared / "deep" / "p.toml", POLICY)
    os.chmod(shared, 0o777)  # two levels up, anyone may write: `deep` could be swapped for another folder
    link = write_private(tmp_path / "mine" / "x", "").with_name("p.toml")
    link.symlink_to(real)
    assert others_can_change(link) == ("folder", "can be written by others", shared)
    os.chmod(shared, 0o1777)  # sticky: others cannot rename `deep`, which is ours
    assert others_can_change(link) is None
    os.chmod(real, 0o664)
    assert others_can_change(link) == ("file", "can be written by others", real)


class Effect:
    """The part of the library's check `moved` reads: `observed["changes"]`."""

    def __init__(self, changes):
        self.observed = {} if changes is None else {"changes": changes}


@pytest.mark.parametrize(
    "changes, mint, fee, counted",
    [
        ([{"asset": "USDC", "mint": USDC, "change": -1_500_000}], USDC, 5000, 1_500_000),
        # SOL withdrawn and unwrapped: lamports in (less the fee the same wallet paid), no wrapped SOL left.
        ([{"asset": "SOL", "mint": None, "change": 15_276_395_125}], SOL, 5000, 15_276_400_125),
        # SOL withdrawn wrapped: the wrapped SOL counts, the lamports are only the fee.
        (
            [{"asset": "SOL", "mint": None, "change": -5000}, {"asset": "wrapped SOL", "mint": SOL, "change": 7}],
            SOL,
            5000,
            7,
        ),
        ([{"asset": "SOL", "mint": None, "change": 10}], SOL, None, None),  # the fee unknown: so is the SOL moved
        ([{"asset": "USDC", "mint": USDC, "change": 0}], USDC, 5000, None),  # a write that moves nothing of it
        ([{"asset": "SOL", "mint": None, "change": -5000}], USDC, 5000, None),
        ([{"asset": "USDC", "mint": USDC, "change": "1"}], USDC, 5000, None),  # not a number of base units
        (None, USDC, 5000, None),  # the check observed no changes at all
    ],
)
def test_what_a_write_moves_is_read_from_the_simulated_changes_or_is_unknown(policy, changes, mint, fee, counted):
    from yieldcli.mcp.moved import moved

    assert moved(Effect(changes), mint, fee) == counted
    if counted is None:
        decision = decide(policy, "deposit", USDC, None, Budget())
        assert (decision.verdict, decision.kind) == ("refused", "policy.unknown_amount")


def test_a_policy_naming_one_asset_twice_is_refused_naming_both_lines(tmp_path):
    text = POLICY + '\n[assets.usdc]\nper_call = "1000"\n'
    with pytest.raises(ConfigError, match=r"\[assets.USDC\] \(line 5\) and \[assets.usdc\] \(line 11\) name the same"):
        load_policy(write_private(tmp_path / "p" / "p.toml", text), required=True)
