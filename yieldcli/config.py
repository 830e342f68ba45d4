"""Settings: flag > environment > profile in the config file > built-in default, each with its source.

The config file is TOML: top-level defaults plus `[profiles.NAME]` tables. When `yield` has no RPC
URL or keypair of its own it reads the Solana CLI's config, as Solana users expect.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

from yieldcli.environment import Environment
from yieldcli.errors import ConfigError, UsageError

DEFAULT_API_URL = "https://api.breeze.baby"
DEFAULT_PROFILE = "default"


class Spec(NamedTuple):
    """One setting: where it can come from and what it defaults to."""

    name: str
    env: str | None
    flag: str | None
    default: Any
    help: str
    secret: bool = False


SPECS: dict[str, Spec] = {
    s.name: s
    for s in (
        Spec("api_url", "YIELD_API_URL", "--api-url", DEFAULT_API_URL, "base URL of the service"),
        Spec("strategy", "YIELD_STRATEGY", "--strategy", None, "default strategy id"),
        Spec("output", "YIELD_OUTPUT", "--output", None, "table, json, ndjson or csv (default: table on a terminal, json otherwise)"),
        Spec("timeout", "YIELD_TIMEOUT", "--timeout", "30", "seconds per request"),
        Spec("rpc_url", "YIELD_RPC_URL", "--url", None, "Solana RPC URL or moniker"),
        Spec("keypair", "YIELD_KEYPAIR", "--keypair", None, "path to a solana-keygen keypair file"),
        Spec("color", None, "--color", "auto", "auto, always or never"),
    )
}
# The API key is a setting too, but never in the config file and never a flag.
API_KEY_ENV = "YIELD_API_KEY"


class Setting(NamedTuple):
    name: str
    value: Any
    source: str  # flag, env, sandbox, config, solana-cli, keyring, default
    location: str = ""


def config_dir(env: Environment) -> Path:
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return Path(base) / "yield"


def data_dir(env: Environment) -> Path:
    base = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "share")
    return Path(base) / "yield"


def solana_cli_config_path(env: Environment) -> Path:
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".config" / "solana" / "cli" / "config.yml"


def read_solana_cli_config(env: Environment) -> dict[str, str]:
    """`json_rpc_url` and `keypair_path` from the Solana CLI's YAML (flat `key: value` lines)."""
    path = solana_cli_config_path(env)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep or line.startswith((" ", "\t", "#")):
            continue
        value = value.strip().strip("'\"")
        if key.strip() in ("json_rpc_url", "keypair_path") and value:
            found[key.strip()] = value
    return found


class ConfigFile:
    """The TOML file: read once, written atomically and privately."""

    KEYS = tuple(SPECS)

    def __init__(self, path: Path, data: dict[str, Any]):
        self.path = path
        self.data = data

    @classmethod
    def load(cls, path: Path) -> "ConfigFile":
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return cls(path, {})
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
        import tomllib  # only when a config file exists: its parser compiles regexes on import

        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"config file {path} is not valid TOML: {exc}",
                hint=f"fix or remove {path}",
            ) from None
        profiles = data.get("profiles", {})
        if not isinstance(profiles, dict) or not all(isinstance(v, dict) for v in profiles.values()):
            raise ConfigError(f"config file {path}: [profiles.NAME] entries must be tables")
        return cls(path, data)

    def lookup(self, key: str, profile: str) -> tuple[Any, str] | None:
        """The value for `key` from the profile's table, else the top level; with where it was found."""
        table = self.data.get("profiles", {}).get(profile, {})
        if key in table:
            return table[key], f"{self.path} [profiles.{profile}]"
        if key in self.data and key != "profiles":
            return self.data[key], str(self.path)
        return None

    def profiles(self) -> list[str]:
        return sorted(self.data.get("profiles", {}))

    def set(self, key: str, value: str, profile: str | None) -> None:
        check_key(key)
        self._table(profile, create=True)[key] = value

    def unset(self, key: str, profile: str | None) -> bool:
        check_key(key)
        table = self._table(profile, create=False)
        return table.pop(key, None) is not None if table is not None else False

    def _table(self, profile: str | None, *, create: bool) -> dict[str, Any] | None:
        if profile is None:
            return self.data
        profiles = self.data.setdefault("profiles", {}) if create else self.data.get("profiles", {})
        return profiles.setdefault(profile, {}) if create else profiles.get(profile)

    def save(self) -> None:
        import tomli_w

        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".toml.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            tomli_w.dump(self.data, handle)
        os.replace(tmp, self.path)


def check_key(key: str) -> None:
    if key not in SPECS:
        raise UsageError(
            f"unknown setting {key!r}",
            hint="settings: " + ", ".join(SPECS),
        )


class Settings:
    """Resolves each setting, remembering where its value came from."""

    def __init__(self, env: Environment, config: ConfigFile, profile: Setting,
                 flags: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None):
        self.env = env
        self.config = config
        self.profile = profile
        self.flags = dict(flags or {})
        # Values that beat the profile and the defaults but not flags or env (the embedded sandbox's).
        self.overrides = dict(overrides or {})
        self._solana_cli: dict[str, str] | None = None

    def get(self, name: str) -> Setting:
        spec = SPECS[name]
        if self.flags.get(name) is not None:
            return Setting(name, self.flags[name], "flag", spec.flag or "")
        if spec.env and self.env.get(spec.env) is not None:
            return Setting(name, self.env.get(spec.env), "env", spec.env)
        if self.overrides.get(name) is not None:
            return Setting(name, self.overrides[name], "sandbox", "--sandbox")
        found = self.config.lookup(name, self.profile.value)
        if found is not None:
            return Setting(name, found[0], "config", found[1])
        solana_key = {"rpc_url": "json_rpc_url", "keypair": "keypair_path"}.get(name)
        if solana_key:
            if self._solana_cli is None:
                self._solana_cli = read_solana_cli_config(self.env)
            if solana_key in self._solana_cli:
                return Setting(name, self._solana_cli[solana_key], "solana-cli", str(solana_cli_config_path(self.env)))
            if name == "keypair":
                default_keypair = solana_cli_config_path(self.env).parent.parent / "id.json"
                if default_keypair.exists():
                    return Setting(name, str(default_keypair), "solana-cli", "default Solana keypair")
        return Setting(name, spec.default, "default", "")

    def value(self, name: str) -> Any:
        return self.get(name).value


def resolve_profile(flag: str | None, env: Environment) -> Setting:
    if flag:
        return Setting("profile", flag, "flag", "--profile")
    if env.get("YIELD_PROFILE"):
        return Setting("profile", env.get("YIELD_PROFILE"), "env", "YIELD_PROFILE")
    return Setting("profile", DEFAULT_PROFILE, "default", "")


def resolve_config_path(flag: str | None, env: Environment) -> Setting:
    if flag:
        return Setting("config", flag, "flag", "--config")
    if env.get("YIELD_CONFIG"):
        return Setting("config", env.get("YIELD_CONFIG"), "env", "YIELD_CONFIG")
    return Setting("config", str(config_dir(env) / "config.toml"), "default", "")
