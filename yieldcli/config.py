"""Settings: flag > environment > profile in the config file > built-in default, each with its source.

The config file is TOML: top-level defaults plus `[profiles.NAME]` tables. When `yield` has no RPC
URL or keypair of its own it reads the Solana CLI's config, as Solana users expect.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar, overload

from yieldcli.environment import Environment
from yieldcli.errors import ConfigError, UsageError
from yieldcli.files import others_can_change, read_small_file, take_file_lock, write_atomically

T = TypeVar("T")
# A config file is a few hundred bytes; refusing megabytes keeps `--config /dev/zero` harmless.
CONFIG_MAX_BYTES = 1 << 20

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


_OUTPUT_HELP = "table, json, ndjson or csv (default: table on a terminal, json otherwise)"
_PRIORITY_FEE_HELP = "auto, or micro-lamports per compute unit, for transactions sent (default: none)"
_MAX_FEE_HELP = (
    "most lamports a transaction may pay in fees, base plus priority "
    "(default: no cap; 0.01 SOL of priority fee with auto)"
)
_STRATEGY_PROGRAM_HELP = (
    "the strategy's on-chain program on a cluster other than mainnet (mainnet's is pinned; default: the sandbox's)"
)
SPECS: dict[str, Spec] = {
    s.name: s
    for s in (
        Spec("api_url", "YIELD_API_URL", "--api-url", DEFAULT_API_URL, "base URL of the service"),
        Spec("strategy", "YIELD_STRATEGY", "--strategy", None, "default strategy id"),
        Spec("output", "YIELD_OUTPUT", "--output", None, _OUTPUT_HELP),
        Spec("timeout", "YIELD_TIMEOUT", "--timeout", "30", "seconds per request"),
        Spec("rpc_url", "YIELD_RPC_URL", "--url", None, "Solana RPC URL or moniker"),
        Spec("keypair", "YIELD_KEYPAIR", "--keypair", None, "path to a solana-keygen keypair file"),
        Spec("color", None, "--color", "auto", "auto, always or never"),
        Spec("priority_fee", "YIELD_PRIORITY_FEE", "--priority-fee", None, _PRIORITY_FEE_HELP),
        Spec("max_fee", "YIELD_MAX_FEE", "--max-fee", None, _MAX_FEE_HELP),
        Spec("strategy_program", "YIELD_STRATEGY_PROGRAM", None, None, _STRATEGY_PROGRAM_HELP),
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
        found = read_small_file(
            str(path), label=f"Solana CLI config {path}", limit=CONFIG_MAX_BYTES, error=ConfigError, missing_ok=True
        )
        text = found.data.decode("utf-8") if found else ""
    except (ConfigError, UnicodeDecodeError):
        return {}  # the Solana CLI's file is only a fallback: an unreadable one is as good as none
    settings: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep or line.startswith((" ", "\t", "#")):
            continue
        value = value.strip().strip("'\"")
        if key.strip() in ("json_rpc_url", "keypair_path") and value:
            settings[key.strip()] = value
    return settings


class ConfigFile:
    """The TOML file: read once, written atomically and privately."""

    def __init__(self, path: Path, data: dict[str, Any]):
        self.path = path
        self.data = data

    @classmethod
    def load(cls, path: Path) -> ConfigFile:
        _check_trusted(path)
        found = read_small_file(
            str(path), label=f"config file {path}", limit=CONFIG_MAX_BYTES, error=ConfigError, missing_ok=True
        )
        if found is None:
            return cls(path, {})
        import tomllib  # only when a config file exists: its parser compiles regexes on import

        try:
            data = tomllib.loads(found.data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"config file {path} is not valid TOML: {exc}",
                hint=f"fix or remove {path}",
            ) from None
        except RecursionError:  # arrays nested thousands deep
            raise ConfigError(
                f"config file {path} is not valid TOML: nested too deeply", hint=f"fix or remove {path}"
            ) from None
        profiles = data.get("profiles", {})
        if not isinstance(profiles, dict) or not all(isinstance(v, dict) for v in profiles.values()):
            raise ConfigError(f"config file {path}: [profiles.NAME] entries must be tables")
        return cls(path, data)

    def unknown_keys(self) -> list[str]:
        """One line per key no setting reads (`rpc-url`, `bogus`), with where it is and the setting it
        may have meant: a misspelled key would otherwise be ignored without a word."""
        from difflib import get_close_matches

        found = [(key, str(self.path)) for key in self.data if key not in SPECS and key != "profiles"]
        for name, table in self.data.get("profiles", {}).items():
            found += [(key, f"{self.path} [profiles.{name}]") for key in table if key not in SPECS]
        lines = []
        for key, where in found:
            close = get_close_matches(key.replace("-", "_").lower(), list(SPECS), n=1, cutoff=0.6)
            meant = f"; did you mean {close[0]!r}?" if close else f"; settings: {', '.join(SPECS)}"
            lines.append(f"{where}: unknown setting {key!r}{meant}")
        return lines

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
        if profile is None:
            table = self.data
        else:
            table = self.data.setdefault("profiles", {}).setdefault(profile, {})
        table[key] = value

    def unset(self, key: str, profile: str | None) -> bool:
        check_key(key)
        table = self.data if profile is None else self.data.get("profiles", {}).get(profile)
        return table.pop(key, None) is not None if table is not None else False

    def save(self) -> None:
        import tomli_w

        write_atomically(self.path, tomli_w.dumps(self.data))

    def update(self, change: Callable[[ConfigFile], bool]) -> bool:
        """Read the file again, `change` it, and write it when `change` says it changed, all under an
        exclusive lock beside it (`NAME.lock`): two processes setting two keys at once keep both."""
        lock = self.path.with_name(self.path.name + ".lock")
        try:
            fd = take_file_lock(lock)
        except OSError as exc:
            raise ConfigError(
                f"cannot open the config file's lock {lock}: {exc.strerror or type(exc).__name__}",
                hint="check that the directory is writable",
            ) from None
        try:
            fresh = ConfigFile.load(self.path)
            changed = change(fresh)
            if changed:
                fresh.save()
            self.data = fresh.data
            return changed
        finally:
            os.close(fd)


def check_key(key: str) -> None:
    if key not in SPECS:
        raise UsageError(
            f"unknown setting {key!r}",
            hint="settings: " + ", ".join(SPECS),
        )


class Settings:
    """Every setting resolved once, each with where its value came from; never changed afterwards.

    A command's own flags (`--strategy`, `-u/--url`, `-k/--keypair`) make a new object with
    `with_flags`, so what `config show` lists is what a command uses. Overrides beat the profile and
    the defaults but not flags or the environment (the embedded sandbox's strategy, RPC and keypair);
    an override may be a function, called once when the setting is first asked for (the sandbox's
    RPC URL exists only once its server runs).
    """

    def __init__(
        self,
        env: Environment,
        config: ConfigFile,
        profile: Setting,
        flags: Mapping[str, Any] | None = None,
        overrides: Mapping[str, Any] | None = None,
        forced: Mapping[str, Any] | None = None,
    ):
        self.env = env
        self.config = config
        self.profile = profile
        self.flags: Mapping[str, Any] = MappingProxyType(dict(flags or {}))
        self.overrides: Mapping[str, Any] = MappingProxyType(dict(overrides or {}))
        # Values nothing beats (the embedded sandbox's service URL: --sandbox talks to it whatever else is set).
        self.forced: Mapping[str, Any] = MappingProxyType(dict(forced or {}))
        self._resolved: dict[str, Setting] = {}  # a memo of the above: each setting resolves once
        self._solana_cli: dict[str, str] | None = None

    def with_flags(self, **flags: Any) -> Settings:
        """The same settings with a command's own flags on top (None: the flag was not given)."""
        given = {name: value for name, value in flags.items() if value is not None}
        if not given:
            return self
        derived = Settings(self.env, self.config, self.profile, {**self.flags, **given}, self.overrides, self.forced)
        derived._solana_cli = self._solana_cli
        derived._resolved = {name: setting for name, setting in self._resolved.items() if name not in given}
        return derived

    def get(self, name: str) -> Setting:
        if name not in self._resolved:
            self._resolved[name] = self._resolve(name)
        return self._resolved[name]

    def _resolve(self, name: str) -> Setting:
        spec = SPECS[name]
        forced = self.forced.get(name)
        if forced is not None:
            return Setting(name, forced() if callable(forced) else forced, "sandbox", "--sandbox")
        if self.flags.get(name) is not None:
            return Setting(name, self.flags[name], "flag", spec.flag or "")
        if spec.env and self.env.get(spec.env) is not None:
            return Setting(name, self.env.get(spec.env), "env", spec.env)
        override = self.overrides.get(name)
        if override is not None:
            return Setting(name, override() if callable(override) else override, "sandbox", "--sandbox")
        found = self.config.lookup(name, self.profile.value)
        if found is not None:
            check_type(name, *found)
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

    def checked(self, name: str, check: Callable[[Any, str], T]) -> T:
        """`check(value, name)` on a setting's value; `name` is the flag's spelling when it came from one.

        A value from a flag that `check` refuses is a usage error (exit 2); from the environment or
        a file it is a configuration error (exit 3) that says where the value was found.
        """
        setting = self.get(name)
        from_flag = setting.source == "flag"
        try:
            return check(setting.value, setting.location if from_flag and setting.location else name)
        except UsageError as exc:
            if from_flag:
                raise
            raise ConfigError(f"{exc.message} (from {setting.location or setting.source})", hint=exc.hint) from None


# TOML types a setting may have in the config file: text, and for timeout a number too.
_TOML_TYPES = {bool: "a boolean", int: "an integer", float: "a number", list: "an array", dict: "a table"}


def check_type(name: str, value: Any, where: str) -> None:
    """A value of the wrong TOML type (`output = ["x"]`) is a configuration error naming the file."""
    numbers_allowed = name in ("timeout", "priority_fee", "max_fee")
    if isinstance(value, str) or (numbers_allowed and isinstance(value, (int, float)) and not isinstance(value, bool)):
        return
    kind = next((text for cls, text in _TOML_TYPES.items() if type(value) is cls), "a date or time")
    expected = "a string or a number" if numbers_allowed else "a string"
    raise ConfigError(
        f"{where}: {name} is {kind}; expected {expected}",
        hint=f"set it with `yield config set {name} VALUE`, or fix the file",
    )


@overload
def not_empty(flag: str, name: str) -> str: ...
@overload
def not_empty(flag: str | None, name: str) -> str | None: ...
def not_empty(flag: str | None, name: str) -> str | None:
    if flag is not None and not flag.strip():
        raise UsageError(f"{name} is empty", hint=f"give {name} a value, or leave it out")
    return flag


def resolve_profile(flag: str | None, env: Environment) -> Setting:
    if not_empty(flag, "--profile"):
        return Setting("profile", flag, "flag", "--profile")
    if env.get("YIELD_PROFILE"):
        return Setting("profile", env.get("YIELD_PROFILE"), "env", "YIELD_PROFILE")
    return Setting("profile", DEFAULT_PROFILE, "default", "")


def check_profile(config: ConfigFile, profile: Setting) -> None:
    """A profile named (flag or environment) must be one the config file has: a typo must not fall
    back to the top-level settings, which may be production's. The default profile always exists."""
    if profile.value == DEFAULT_PROFILE or profile.value in config.profiles():
        return
    known = config.profiles()
    has = f"its profiles are {', '.join(known)}" if known else "it has no profiles"
    raise ConfigError(
        f"unknown profile {profile.value!r} (from {profile.location or profile.source}): "
        f"not in the config file {config.path}; {has}",
        kind="config.profile.unknown",
    )


def resolve_config_path(flag: str | None, env: Environment) -> Setting:
    if not_empty(flag, "--config"):
        return Setting("config", flag, "flag", "--config")
    if env.get("YIELD_CONFIG"):
        return Setting("config", env.get("YIELD_CONFIG"), "env", "YIELD_CONFIG")
    return Setting("config", str(config_dir(env) / "config.toml"), "default", "")


def _check_trusted(path: Path) -> None:
    """The config file names the keypair, the RPC, the service and the strategy the guard pins: one that
    others can change is refused (exit 3), as the trust file is."""
    try:
        problem = others_can_change(path)
    except FileNotFoundError:
        return  # absent: built-in defaults (or the file this command writes)
    except OSError:
        return  # unreadable: reading it says so
    if problem is not None:
        which, why, where = problem
        what = "config file" if which == "file" else f"folder {where} of the config file"
        fix = f"chmod go-w {where}" if why == "can be written by others" else f"check the owner of {where}"
        raise ConfigError(f"the {what} {path} {why}: refusing to use it", hint=fix, kind="config.file.unsafe")


def load_config(setting: Setting, *, creating: bool = False) -> ConfigFile:
    """The config file a setting names. The default file may be absent (built-in defaults); one named
    with --config or YIELD_CONFIG must exist, unless this command writes it (`creating`): a typo in
    its name must not fall back to defaults without a word."""
    path = Path(str(setting.value)).expanduser()
    if setting.source != "default" and not creating and not os.path.lexists(path):
        raise ConfigError(
            f"config file {path} (from {setting.location}) does not exist",
            hint=f"check the path, or create it with `yield {setting.location} {path} config set KEY VALUE`"
            if setting.source == "flag"
            else f"check the path, or unset {setting.location}",
            kind="config.file.missing",
        )
    return ConfigFile.load(path)
