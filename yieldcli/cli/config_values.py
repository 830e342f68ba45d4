"""A setting's value checked as `yield config set` checks it, the problems of a whole config file,
and the profile a write goes to: shared by `config`, `init` and the doctor's checks."""

from typing import TYPE_CHECKING

from yieldcli import config as cfg
from yieldcli.cli.render.formats import MODES
from yieldcli.cli.session import rpc_url_of
from yieldcli.errors import ConfigError, UsageError
from yieldcli.files import reads_stdin
from yieldcli.numbers import parse_seconds
from yieldcli.urls import check_base_url

if TYPE_CHECKING:
    from yieldcli.cli.session import Session


def check_value(key: str, value: str) -> str:
    if key == "api_key":
        raise UsageError("the API key is never written to the config file", hint="use `yield auth login`")
    cfg.check_key(key)
    if not value.strip():
        raise UsageError(f"{key} cannot be set to an empty value", hint=f"`yield config unset {key}` removes it")
    if key == "rpc_url":
        rpc_url_of(value, "rpc_url")
    if key == "output" and value not in MODES:
        raise UsageError(f"invalid output {value!r}", hint="use one of: " + ", ".join(MODES))
    if key == "color" and value not in ("auto", "always", "never"):
        raise UsageError(f"invalid color {value!r}", hint="use auto, always or never")
    if key == "api_url":
        check_base_url(value)
    if key == "timeout":
        parse_seconds(value, name="timeout")
    if key == "keypair":
        _check_keypair_file(value)
    return value


def _check_keypair_file(value: str) -> None:
    """A keypair path is written only once it reads as a keypair (`-` is standard input: read when used; a Ledger URL
    is checked for its form, the device is asked when it signs)."""
    from yieldcli.chain.keys.ledger.urls import is_ledger_url, parse_ledger_url

    if reads_stdin(value):
        return
    if is_ledger_url(value):
        parse_ledger_url(value)
        return
    from yieldcli.chain.keys.keypairs import read_keypair_bytes

    try:
        read_keypair_bytes(value)
    except ConfigError as exc:
        raise UsageError(
            f"not set: {exc.message}", hint=exc.hint or "give the path of a solana-keygen keypair file"
        ) from None


def target_profile(session: "Session") -> str | None:
    """Writes go to [profiles.NAME] when a profile was chosen, else to the top level."""
    profile = session.settings.profile
    return None if profile.source == "default" else str(profile.value)


def config_problems(config: cfg.ConfigFile) -> list[str]:
    """Every problem of the file, one line each: unknown keys, then values that `config set` would refuse."""
    problems = config.unknown_keys()
    tables = [(str(config.path), config.data)] + [
        (f"{config.path} [profiles.{name}]", table) for name, table in config.data.get("profiles", {}).items()
    ]
    for where, table in tables:
        for key, value in table.items():
            if key not in cfg.SPECS:
                continue
            try:
                cfg.check_type(key, value, where)
                check_value(key, str(value))
            except (UsageError, ConfigError) as exc:
                problems.append(f"{where}: {key}: {exc.message.removeprefix(f'{where}: ')}")
    return problems
