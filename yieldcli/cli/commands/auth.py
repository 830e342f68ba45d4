"""`yield auth`: keep the API key in the OS keyring, one entry per profile."""

from typing import TYPE_CHECKING, Any

import typer

from yieldcli import secrets
from yieldcli.cli import flags as opt
from yieldcli.cli.api_key_input import read_key, store_key
from yieldcli.cli.command_context import session_of
from yieldcli.config import API_KEY_ENV
from yieldcli.errors import ConfigError

if TYPE_CHECKING:
    pass

auth_app = opt.command_group("Store, check and remove the API key.")


@auth_app.command("login")
def login(
    ctx: typer.Context,
    with_token: bool = typer.Option(
        False, "--with-token", help="Read the key from standard input instead of a prompt."
    ),
) -> None:
    """Store the API key for the current profile in the OS keyring.

    Example: printf '%s' "$KEY" | yield auth login --with-token
    """
    session = session_of(ctx)
    store_key(session, read_key(session, with_token))


@auth_app.command("status")
def status(
    ctx: typer.Context,
    check: bool = typer.Option(False, "--check", help="Also ask the service whether it accepts the key (one request)."),
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Say which API key source is in use (key masked); with --check, whether the service accepts it.

    Example: yield auth status --check -o json | jq .accepted
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    found, why_none = secrets.find_api_key(session.env, session.profile)
    if found is None:
        raise ConfigError(
            f"no API key for profile {session.profile!r}" + (f": {why_none}" if why_none else ""),
            hint=f"set {API_KEY_ENV}" if why_none else f"run `yield auth login` or set {API_KEY_ENV}",
        )
    body: dict[str, Any] = {
        "profile": session.profile,
        "source": found.source,
        "location": found.location,
        "key": secrets.mask(found.value),
    }
    verdict = None
    if check:
        from yieldcli.cli.checks.setup import key_accepted

        verdict = key_accepted(session)
        body["accepted"] = verdict.status == "ok"
        body["check"] = verdict.detail

    def lines() -> list[str]:
        said = [f"profile {body['profile']}: API key {body['key']} from {body['location']}"]
        if verdict is not None:
            colour = "green" if verdict.status == "ok" else "red"
            accepted = out.paint("accepted" if body["accepted"] else "not accepted", colour, stderr=False)
            said.append(f"{accepted}: {verdict.detail}")
        return said

    out.result(body, lines, kind="auth")
    if verdict is not None and verdict.status == "fail":
        from yieldcli.cli.checks.check import failure

        raise failure(verdict, verdict.detail)


@auth_app.command("logout")
def logout(ctx: typer.Context) -> None:
    """Remove the stored API key of the current profile.

    Example: yield --profile staging auth logout
    """
    session = session_of(ctx)
    removed = secrets.delete_api_key(session.profile)
    out = session.output()
    out.info(
        f"API key removed for profile {session.profile!r}"
        if removed
        else f"no API key was stored for profile {session.profile!r}"
    )
    if session.env.get(API_KEY_ENV):
        out.warn(f"{API_KEY_ENV} is still set in this environment")
