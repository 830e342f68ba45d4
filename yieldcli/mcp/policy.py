"""The user's rules for what an agent may have signed: a TOML file no tool can change.

    writes = true                 # off unless true
    kill_switch = false           # true: every write is refused
    actions = ["deposit", "withdraw"]   # "close-account" too; it always asks the person
    writes_per_hour = 10

    [assets.USDC]                 # only the assets named here; amounts in token units, as text
    auto_per_call = "10"          # up to this per call, and
    auto_daily = "50"             # up to this in a rolling 24 h, without asking
    per_call = "100"              # never more per call, even with a yes
    daily = "500"                 # never more in a rolling 24 h, even with a yes

The file is read at start: a change made while the server runs (by an agent's other tools) takes
effect only when the person restarts it, with one exception that can only stop writes: the file is
read again, by its path, before every decision (`kill_switch_now`), and the kill switch or writes
turned off stop the next write. The file is judged where it really is (every symlink resolved, now):
neither it nor any folder above it may be writable by anyone but its owner, each must belong to the
user or root, and the file itself is opened once, without following a link, and judged on that
open file (a regular file with one name), whose bytes are the ones parsed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yieldcli import tokens
from yieldcli.amounts import Amount, format_units
from yieldcli.client.actions import ACTIONS, action_named
from yieldcli.errors import ConfigError, Refused, UsageError
from yieldcli.files import Unsafe, others_can_change, read_checked

_TOP_KEYS = {"writes", "kill_switch", "actions", "writes_per_hour", "assets"}
_LIMIT_KEYS = ("auto_per_call", "auto_daily", "per_call", "daily")


@dataclass(frozen=True)
class AssetLimits:
    """Base units of one mint: the automatic limits, then the hard ones."""

    symbol: str
    decimals: int
    auto_per_call: int
    auto_daily: int
    per_call: int
    daily: int


@dataclass(frozen=True)
class Policy:
    writes: bool = False
    kill_switch: bool = False
    actions: tuple[str, ...] = ()
    writes_per_hour: int = 0
    assets: dict[str, AssetLimits] = field(default_factory=dict)  # by mint
    source: str = "(none: writes are off)"
    text: str = ""
    real: str = ""  # the file read at start, every symlink resolved (the path is resolved afresh each time)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "writes": self.writes,
            "kill_switch": self.kill_switch,
            "actions": list(self.actions),
            "writes_per_hour": self.writes_per_hour,
            "assets": {
                mint: {"symbol": a.symbol, **{k: _units(getattr(a, k), a.decimals) for k in _LIMIT_KEYS}}
                for mint, a in self.assets.items()
            },
        }


@dataclass(frozen=True)
class Budget:
    """What the audit log says was reserved (sent or about to be) in the windows that count."""

    day: int = 0  # base units of this mint in the last 24 h
    auto_day: int = 0  # of which without a person's yes
    writes_last_hour: int = 0


@dataclass(frozen=True)
class Decision:
    verdict: str  # "auto", "approval" or "refused"
    reason: str
    kind: str = "refused.policy"  # the error kind of a refusal

    def to_dict(self) -> dict[str, str]:
        return {"verdict": self.verdict, "reason": self.reason, "kind": self.kind}


UNKNOWN_AMOUNT = Decision(
    "refused",
    "the amount this transaction moves cannot be determined from its simulated effect",
    "policy.unknown_amount",
)


def decide(policy: Policy, action: str, mint: str, raw: int | None, budget: Budget) -> Decision:
    """What the policy says of one write of `raw` base units of `mint`, given what was already reserved;
    `raw` None is an amount that could not be determined: refused, never counted as nothing."""
    if policy.kill_switch:
        return Decision("refused", "the policy's kill switch is on")
    if not policy.writes:
        return Decision("refused", f"writes are off in the policy ({policy.source})")
    if action not in policy.actions:
        return Decision("refused", f"the policy does not allow {action}")
    limits = policy.assets.get(mint)
    if limits is None:
        return Decision("refused", "the policy does not allow this asset")
    if budget.writes_last_hour >= policy.writes_per_hour:
        return Decision("refused", f"the policy allows {policy.writes_per_hour} write(s) an hour")
    if raw is None:
        return UNKNOWN_AMOUNT
    amount = _units(raw, limits.decimals)
    if raw > limits.per_call:
        return Decision(
            "refused",
            f"{amount} {limits.symbol} is above the per-call limit of {_units(limits.per_call, limits.decimals)}",
        )
    if budget.day + raw > limits.daily:
        return Decision(
            "refused",
            f"{amount} {limits.symbol} would pass the 24-hour limit of "
            f"{_units(limits.daily, limits.decimals)} "
            f"({_units(budget.day, limits.decimals)} already used)",
        )
    if action_named(action).asks_always:
        return Decision("approval", f"{action} always needs your approval")
    if raw > limits.auto_per_call or budget.auto_day + raw > limits.auto_daily:
        return Decision("approval", f"{amount} {limits.symbol} is above the automatic limits")
    return Decision("auto", "within the automatic limits")


def refuse(decision: Decision) -> None:
    if decision.verdict == "refused":
        raise refusal(decision)


def refusal(decision: Decision) -> Refused:
    return Refused(f"the policy refuses this: {decision.reason}; nothing was signed", kind=decision.kind)


def default_policy_path(config_dir: Path) -> Path:
    return config_dir / "mcp-policy.toml"


POLICY_MAX_BYTES = 1 << 20  # a policy is a few hundred bytes; more is not one a person wrote


def load_policy(path: Path, *, required: bool) -> Policy:
    """The policy at `path`; a missing file is no policy (writes off) unless `required`. `path` may be
    a symlink: it is resolved now, and the file it names is opened once without following a link and
    judged on what was opened (a regular file of the user's or root's, writable by nobody else, with
    one name); its bytes are what is parsed."""
    try:
        real = Path(os.path.realpath(path))
        _check_private(path, real)
        found = read_checked(path, follow=True, limit=POLICY_MAX_BYTES)
    except FileNotFoundError:
        found = None
    except Unsafe as exc:
        raise ConfigError(
            f"the policy file {_shown(path, real)} {exc.why}: refusing it", kind="config.policy"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the policy {path}: {exc.strerror}", kind="config.policy") from None
    if found is None:
        if required:
            raise ConfigError(f"no policy file at {path}", kind="config.policy")
        return Policy()
    data, real = found
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"cannot read the policy {path}: not UTF-8 text", kind="config.policy") from None
    return _parse(text, str(path), str(real))


def kill_switch_now(policy: Policy) -> str | None:
    """Why writes must stop now, from the policy file read afresh by the path it was given as (None:
    they need not). A symlink re-pointed, a file renamed over it or edited in place: whatever is
    there now is resolved, opened and judged as at start (`load_policy`). Only what stops writes is
    taken from it: the kill switch, or writes turned off; a file that is gone, cannot be read or
    trusted, or does not parse stops writes too (fail closed). Nothing else changes while the server
    runs (a looser limit would be an agent's to write)."""
    if policy.kill_switch:
        return "the policy's kill switch is on"
    if not policy.real:
        return None  # no file: writes are off anyway
    try:
        now = load_policy(Path(policy.source), required=True)
    except ConfigError as exc:
        return f"the policy file cannot be read now ({exc.message})"
    if now.kill_switch:
        return "the policy's kill switch is on"
    return None if now.writes else "writes are off in the policy now"


def _shown(path: Path, real: Path) -> str:
    return f"{path} (really {real})" if real != path else str(path)


def _check_private(path: Path, real: Path) -> None:
    """Refuse a policy others could rewrite: the file, or any folder above it."""
    problem = others_can_change(real)
    if problem is not None:
        which, why, where = problem
        what = "policy file" if which == "file" else f"folder {where} of the policy file"
        fix = f" (chmod go-w {where})" if why == "can be written by others" else ""
        raise ConfigError(f"the {what} {_shown(path, real)} {why}: refusing to start{fix}", kind="config.policy")


def _parse(text: str, source: str, real: str) -> Policy:
    import tomllib

    try:
        body = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot read the policy {source}: {exc}", kind="config.policy") from None
    unknown = set(body) - _TOP_KEYS
    if unknown:
        raise _bad(source, f"unknown setting(s) {', '.join(sorted(unknown))}")
    actions = body.get("actions", [])
    if not isinstance(actions, list) or any(a not in ACTIONS for a in actions):
        raise _bad(source, f"actions must be a list of {', '.join(ACTIONS)}")
    assets: dict[str, AssetLimits] = {}
    named: dict[str, str] = {}  # mint -> the name the policy gave it
    for name, table in _table(body.get("assets", {}), source, "assets").items():
        token = tokens.by_symbol(name) or tokens.by_mint(name)
        if token is None:
            raise _bad(source, f"unknown asset {name!r}: name a known token", UNKNOWN_ASSET)
        if token.mint in named:  # two rules for one asset: which one would count is not for us to guess
            first = named[token.mint]
            raise _bad(
                source,
                f"{_where(text, first)} and {_where(text, name)} name the same asset ({token.symbol}): keep one",
            )
        named[token.mint] = name
        limits = _table(table, source, f"assets.{name}")
        if set(limits) - set(_LIMIT_KEYS):
            raise _bad(source, f"assets.{name}: only {', '.join(_LIMIT_KEYS)}")
        assets[token.mint] = AssetLimits(
            token.symbol, token.decimals, *(_limit(limits, key, token.decimals, source, name) for key in _LIMIT_KEYS)
        )
    return Policy(
        _flag(body, "writes", source),
        _flag(body, "kill_switch", source),
        tuple(actions),
        _count(body.get("writes_per_hour", 0), source),
        assets,
        source,
        text,
        real,
    )


def _where(text: str, name: str) -> str:
    """`[assets.NAME]` and the line it is on, as the person wrote it (TOML keeps no line numbers)."""
    import tomllib

    for number, line in enumerate(text.splitlines(), 1):
        header = line.strip()
        if header.startswith("[") and header.endswith("]") and not header.startswith("[["):
            try:
                keys = tomllib.loads(f"{header}\n")
            except tomllib.TOMLDecodeError:
                continue
            if name in keys.get("assets", {}):
                return f"{header} (line {number})"
    return f"assets.{name!r}"


def _limit(table: dict[str, Any], key: str, decimals: int, source: str, asset: str) -> int:
    value = table.get(key, "0")
    if not isinstance(value, str):  # a TOML float is not exact: amounts are text
        raise _bad(source, f'assets.{asset}.{key} must be a decimal string such as "10.5"')
    try:
        return Amount.parse(value, decimals, name=f"assets.{asset}.{key}").raw if value.strip("0.") else 0
    except UsageError as exc:
        raise _bad(source, str(exc)) from None


def _table(value: Any, source: str, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(source, f"{name} must be a table")
    return value


def _flag(body: dict[str, Any], key: str, source: str) -> bool:
    value = body.get(key, False)
    if not isinstance(value, bool):
        raise _bad(source, f"{key} must be true or false")
    return value


def _count(value: Any, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _bad(source, "writes_per_hour must be a whole number")
    return value


# A policy naming a token that is not built in: the server learns the strategy's tokens and reads it again.
UNKNOWN_ASSET = "config.policy.asset"


def _bad(source: str, why: str, kind: str = "config.policy") -> ConfigError:
    return ConfigError(f"invalid policy {source}: {why}", kind=kind)


def _units(raw: int, decimals: int) -> str:
    return format_units(raw, decimals, min_fraction=0)
