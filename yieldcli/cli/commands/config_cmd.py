"""`yield config`: show, read and write settings in the TOML config file."""

from typing import TYPE_CHECKING, Any

import typer

from yieldcli import config as cfg
from yieldcli import secrets
from yieldcli.cli import flags as opt
from yieldcli.cli.command_context import session_of
from yieldcli.cli.config_values import check_value, config_problems, target_profile
from yieldcli.cli.render.output import Output
from yieldcli.errors import ConfigError
from yieldcli.urls import redact_url

if TYPE_CHECKING:
    from yieldcli.cli.session import Session

config_app = opt.command_group("Show and change settings.")


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
