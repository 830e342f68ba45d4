"""A profile's settings for a Python client, resolved as `yield --profile NAME` resolves them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from yieldcli.errors import ConfigError

if TYPE_CHECKING:
    from yieldcli.config import Settings


class WriteDefaults(NamedTuple):
    """The defaults of every write that a profile (or the environment) sets: the command line,
    `Client.from_profile` and `yield mcp` all read them here. A write's own values win; a transaction
    already signed keeps its fee whatever the default. (A NamedTuple: a read loads this module, and
    would pay for `dataclasses`.)"""

    priority_fee: int | str | None = None  # micro-lamports per compute unit, or "auto"
    priority_fee_source: str = "request"  # where it came from, for the log: env or config
    max_fee: int | None = None  # lamports of base plus priority fee
    strategy_program: str | None = None  # the strategy's program off mainnet


def write_defaults(settings: Settings) -> WriteDefaults:
    """The one place a profile's write settings are resolved and checked (a bad one is a config error
    that names where it was found, or a usage error for a flag)."""
    from yieldcli.chain.fees.compute_budget import MAX_U64, parse_priority_fee
    from yieldcli.numbers import parse_whole

    found = settings.get("priority_fee")
    price = None
    if found.value is not None:
        price = settings.checked("priority_fee", lambda value, name: parse_priority_fee(str(value)))
    max_fee = None
    if settings.get("max_fee").value is not None:
        max_fee = settings.checked(
            "max_fee", lambda value, name: parse_whole(str(value), name=name, minimum=0, maximum=MAX_U64)
        )
    program = settings.value("strategy_program")
    return WriteDefaults(price, found.source, max_fee, str(program) if program else None)


class Profile:
    """Where a client's settings came from: the command line's resolution, read-only."""

    def __init__(
        self,
        name: str,
        api_url: str,
        api_key: str | None,
        timeout: float,
        strategy: str | None,
        rpc_url: str | None = None,
        keypair: str | None = None,
        writes: WriteDefaults = WriteDefaults(),
    ):
        self.writes = writes  # the defaults of every write: priority fee, fee cap, the strategy's program
        self.strategy_program = writes.strategy_program  # the strategy's program off mainnet
        self.rpc_url = rpc_url
        self.keypair = keypair  # a keypair file's path
        self.name = name
        self.api_url = api_url
        self.api_key = api_key
        self.timeout = timeout
        self.strategy = strategy

    def __repr__(self) -> str:  # the key stays out of reprs and tracebacks
        return f"Profile(name={self.name!r}, api_url={self.api_url!r}, strategy={self.strategy!r})"


def load_profile(name: str | None = None) -> Profile:
    """Settings as `yield` resolves them: environment > profile in the config file > default, and the
    API key from YIELD_API_KEY or the keyring."""
    from yieldcli import config
    from yieldcli.environment import Environment
    from yieldcli.secrets import find_api_key

    env = Environment()
    profile = config.resolve_profile(name, env)
    file = config.load_config(config.resolve_config_path(None, env))
    config.check_profile(file, profile)
    settings = config.Settings(env, file, profile)
    timeout_text = str(settings.value("timeout"))
    try:
        timeout = float(timeout_text)
    except ValueError:
        raise ConfigError(f"invalid timeout {timeout_text!r}: expected a number of seconds") from None
    found, _ = find_api_key(env, profile.value)
    strategy, rpc_url, keypair = (settings.value(key) for key in ("strategy", "rpc_url", "keypair"))
    return Profile(
        str(profile.value),
        str(settings.value("api_url")),
        found.value if found else None,
        timeout,
        str(strategy) if strategy else None,
        str(rpc_url) if rpc_url else None,
        str(keypair) if keypair else None,
        write_defaults(settings),
    )


def profile_arguments(name: str | None, overrides: dict[str, Any]) -> dict[str, Any]:
    """The constructor arguments a profile gives (as `yield --profile NAME` resolves them), overrides winning.
    No API key from either is refused now: every request would fail with "Missing credentials"."""
    profile = load_profile(name)
    if profile.api_key is None and overrides.get("api_key") is None:
        from yieldcli.config import API_KEY_ENV  # loaded by load_profile already

        raise ConfigError(
            f"no API key for profile {profile.name!r}: {API_KEY_ENV} is not set and the OS keyring holds none",
            hint=f"set {API_KEY_ENV}, pass api_key=..., or store the profile's key in the OS keyring",
            kind="config.api_key.missing",
        )
    return {
        "api_url": profile.api_url,
        "api_key": profile.api_key,
        "timeout": profile.timeout,
        "strategy": profile.strategy,
        "rpc_url": profile.rpc_url,
        "keypair": profile.keypair,
        "strategy_program": profile.writes.strategy_program,
        "priority_fee": profile.writes.priority_fee,
        "max_fee": profile.writes.max_fee,
        **overrides,
    }
