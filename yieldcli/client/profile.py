"""A profile's settings for a Python client, resolved as `yield --profile NAME` resolves them."""

from __future__ import annotations

from typing import Any

from yieldcli.errors import ConfigError


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
        strategy_program: str | None = None,
    ):
        self.strategy_program = strategy_program  # the strategy's program off mainnet
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
    strategy, rpc_url, keypair, program = (
        settings.value(key) for key in ("strategy", "rpc_url", "keypair", "strategy_program")
    )
    return Profile(
        str(profile.value),
        str(settings.value("api_url")),
        found.value if found else None,
        timeout,
        str(strategy) if strategy else None,
        str(rpc_url) if rpc_url else None,
        str(keypair) if keypair else None,
        str(program) if program else None,
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
        "strategy_program": profile.strategy_program,
        **overrides,
    }
