"""The API key as a person gives it (a hidden prompt, or standard input) and its storing in the OS
keyring: shared by `yield auth login` and `yield init`."""

from typing import TYPE_CHECKING

import typer

from yieldcli import secrets
from yieldcli.config import API_KEY_ENV
from yieldcli.errors import UsageError
from yieldcli.files import read_small_stream

if TYPE_CHECKING:
    from yieldcli.cli.session import Session

# Where a key comes from (the manual's configuration page, "API key", says the same).
KEY_HINT = "copy the key the service's customer portal made for your strategy (see `yield init --help`)"


def read_key(session: "Session", from_stdin: bool) -> str:
    """The API key from standard input or a hidden prompt, once it is known the keyring can keep it:
    a secret must not be pasted for nothing. A key that cannot be sent is refused, naming where it came from."""
    env = session.env
    secrets.check_can_store(session.profile)
    if from_stdin:
        source = "standard input"
        key = read_small_stream(env.stdin, limit=secrets.API_KEY_MAX_LENGTH + 2, what="the API key", error=UsageError)
        key = key.removesuffix("\n").removesuffix("\r")  # the newline `echo` ends it with, nothing else
    elif env.interactive:
        source = "the prompt"
        key = typer.prompt("API key", hide_input=True, err=True)
    else:
        raise UsageError("no terminal to prompt on", hint="pipe the key in with `yield auth login --with-token`")
    problem = secrets.api_key_problem(key)
    if problem:
        raise UsageError(f"the API key from {source} is refused: {problem}", hint=KEY_HINT)
    return key


def store_key(session: "Session", key: str) -> None:
    location = secrets.store_api_key(session.profile, key)
    session.output().info(f"API key {secrets.mask(key)} stored for profile {session.profile!r} in the {location}")
    if session.env.get(API_KEY_ENV):
        session.output().warn(f"{API_KEY_ENV} is set and takes precedence over the stored key")
