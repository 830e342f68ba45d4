"""`yield config`: show, read and write settings in the TOML config file."""

from typing import TYPE_CHECKING, Any

import typer

from yieldcli import config as cfg
from yieldcli import secrets
from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.cli.commands.trust_cmd import trust_app
from yieldcli.cli.render.formats import MODES
from yieldcli.cli.render.output import Output
from yieldcli.cli.session import rpc_url_of
from yieldcli.errors import ConfigError, UsageError
from yieldcli.files import reads_stdin
from yieldcli.numbers import parse_seconds
from yieldcli.urls import check_base_url, redact_url

if TYPE_CHECKING:
    from yieldcli.cli.session import Session

config_app = opt.command_group("Show and change settings.")
config_app.add_typer(trust_app, name="trust")


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


@config_app.command("show")
def show(ctx: typer.Context, output: opt.Output = None, json_: opt.Json = False) -> None:
    """List every setting with its value, source and location (secrets masked).

    Example: yield config show -o json | jq '.[] | select(.source == "env")'
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    settings = session.settings
    rows: list[dict[str, Any]] = [
        {
            "name": "profile",
            "value": settings.profile.value,
            "source": settings.profile.source,
            "location": settings.profile.location,
        },
        {
            "name": "config",
            "value": str(settings.config.path),
            "source": cfg.resolve_config_path(session.options.config, session.env).source,
            "location": "",
        },
    ]
    for name in cfg.SPECS:
        s = settings.get(name)
        value = s.value
        if name in ("api_url", "rpc_url") and isinstance(value, str) and "://" in value:
            value = redact_url(value)  # providers put keys in URLs; `config get` still prints it whole
        rows.append({"name": name, "value": value, "source": s.source, "location": s.location})
    rows.append(_trusted_row(session))
    if session.options.sandbox:  # the embedded sandbox's own key, whatever the keyring holds
        rows.append(
            {
                "name": "api_key",
                "value": secrets.mask(session.sandbox().api_key),
                "source": "sandbox",
                "location": "--sandbox",
            }
        )
    else:
        try:
            found, why_none = secrets.find_api_key(session.env, session.profile)
        except ConfigError as exc:  # a key that cannot be sent: listed as unusable, with why
            found, why_none = None, exc.message
        rows.append(
            {
                "name": "api_key",
                "value": secrets.mask(found.value) if found else None,
                "source": found.source
                if found
                else ("unusable" if why_none and "cannot be sent" in why_none else "unset"),
                "location": found.location if found else (why_none or ""),
            }
        )

    def table() -> None:
        from yieldcli.cli.render.layout import Column

        out.columns(
            [
                Column("Setting", [row["name"] for row in rows]),
                Column("Value", ["" if row["value"] is None else str(row["value"]) for row in rows], squeeze=24),
                Column("Source", [row["source"] for row in rows]),
                Column("Location", [row["location"] for row in rows], drop=1, squeeze=16),
            ]
        )

    out.records(rows, fields=("name", "value", "source", "location"), table=table)


def _trusted_row(session: "Session") -> dict[str, Any]:
    """How many destinations are trusted (`yield config trust list` shows them); an unreadable file says why."""
    from yieldcli.trust import default_trust_path, load_trusted

    path = default_trust_path(session.env)
    try:
        value: int | str = len(load_trusted(path))
    except ConfigError as exc:
        value = f"unreadable: {exc.message}"
    return {"name": "trusted_destinations", "value": value, "source": "trust file", "location": str(path)}


@config_app.command("get")
def get(ctx: typer.Context, key: str = typer.Argument(..., help="Setting name.")) -> None:
    """Print the value a setting resolves to.

    Example: yield config get api_url
    """
    session = session_of(ctx)
    cfg.check_key(key)
    value = session.settings.value(key)
    if value is None:
        raise ConfigError(f"{key} is not set", hint=f"`yield config set {key} VALUE`")
    _bare(session).value(str(value))


@config_app.command("set")
def set_(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="Setting name."),
    value: str = typer.Argument(..., help="New value."),
) -> None:
    """Write a setting to the config file (to the profile's table when --profile is given).

    Example: yield --profile prod config set strategy 43620ba3-354c-456b-aa3c-5bf7fa46a6d4
    """
    session = session_of(ctx)
    session.creates_profile = True
    profile = target_profile(session)
    config = session.settings.config
    checked = check_value(key, value)

    def change(latest: cfg.ConfigFile) -> bool:
        latest.set(key, checked, profile)
        return True

    config.update(change)
    where = f"[profiles.{profile}]" if profile else "top level"
    _bare(session).info(f"{key} set in {config.path} ({where})")


@config_app.command("unset")
def unset(ctx: typer.Context, key: str = typer.Argument(..., help="Setting name.")) -> None:
    """Remove a setting from the config file.

    Example: yield config unset output
    """
    session = session_of(ctx)
    profile = target_profile(session)
    config = session.settings.config
    if config.update(lambda latest: latest.unset(key, profile)):
        _bare(session).info(f"{key} removed from {config.path}")
    else:
        _bare(session).info(f"{key} was not set in {config.path}")


@config_app.command("validate")
def validate(ctx: typer.Context) -> None:
    """Check the config file: TOML, setting names, and each value as `config set` would.

    Exit 3 when anything is wrong, each problem on a line. Example: yield config validate && yield doctor
    """
    session = session_of(ctx)
    session.checks_config = True
    config = session.settings.config
    problems = config_problems(config)
    if problems:
        out = _bare(session)
        for line in problems:
            out.warn(line)
        count = f"{len(problems)} problem{'s' * (len(problems) > 1)}"
        raise ConfigError(
            f"config file {config.path}: {count}", hint="fix them with `yield config set`, or edit the file"
        )
    if not config.path.exists():
        _bare(session).line(f"{config.path}: absent (built-in defaults)")
        return
    profiles = config.profiles()
    _bare(session).line(f"{config.path}: valid" + (f" (profiles: {', '.join(profiles)})" if profiles else ""))


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


@config_app.command("path")
def path(ctx: typer.Context) -> None:
    """Print where the config file is.

    Example: $EDITOR "$(yield config path)"
    """
    session = session_of(ctx)
    _bare(session).value(str(session.settings.config.path))


def _bare(session: "Session") -> Output:
    """A sink for a bare value or a line of news: it reads no output or color setting, so `config get`,
    `config set`, `config unset` and `$EDITOR "$(yield config path)"` work when those are what is broken."""
    return Output(session.env, "table", color=False, quiet=session.options.quiet)
