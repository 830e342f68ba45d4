"""The API key: `YIELD_API_KEY` first (the CI path), then the OS keyring, one entry per profile.

`keyring` costs 60-100 ms to import, so it is imported only when a key is actually looked up.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from yieldcli.config import API_KEY_ENV
from yieldcli.environment import Environment
from yieldcli.errors import ConfigError

KEYRING_SERVICE = "yield"
NO_BACKEND_HINT = f"set {API_KEY_ENV} instead (commands read the key from it before any keyring)"
PLAINTEXT_HINT = (
    f"set {API_KEY_ENV} instead, or use an OS keyring "
    "(Secret Service, KWallet, macOS Keychain, Windows Credential Locker)"
)


class _KeyringModule(Protocol):
    """What this module uses of the `keyring` module (its top-level functions)."""

    def get_password(self, service_name: str, username: str) -> str | None: ...
    def set_password(self, service_name: str, username: str, password: str) -> None: ...
    def delete_password(self, service_name: str, username: str) -> None: ...


class ApiKey(NamedTuple):
    value: str
    source: str  # env or keyring
    location: str

    def __repr__(self) -> str:  # keep the secret out of reprs, tracebacks and logs
        return f"ApiKey(source={self.source!r}, value={mask(self.value)!r})"


def mask(secret: str | None) -> str:
    """Enough to tell two keys apart, never enough to use one."""
    if not secret:
        return ""
    return "****" + (secret[-4:] if len(secret) >= 16 else "")


# Keys are tens of characters; a header is no place for megabytes.
API_KEY_MAX_LENGTH = 1024


def api_key_problem(key: str) -> str | None:
    """Why `key` cannot be sent as the x-api-key header (never quoting it), or None when it can."""
    if not key:
        return "it is empty"
    if len(key) > API_KEY_MAX_LENGTH:
        return f"it is {len(key)} characters long (at most {API_KEY_MAX_LENGTH})"
    if not all("!" <= ch <= "~" for ch in key):
        return "it contains spaces, control characters or non-ASCII characters"
    return None


def _keyring_username(profile: str) -> str:
    return f"api-key:{profile}"


def find_api_key(env: Environment, profile: str) -> tuple[ApiKey | None, str | None]:
    """The key in use and, when none was found, why the keyring could not help (for the hint)."""
    value = env.get(API_KEY_ENV)
    if value:
        return _sendable(ApiKey(value, "env", API_KEY_ENV)), None
    try:
        stored = _keyring().get_password(KEYRING_SERVICE, _keyring_username(profile))
    except ConfigError as exc:
        return None, exc.message
    except Exception as exc:  # any backend failure: locked, D-Bus errors, corrupt store
        return None, f"the OS keyring could not be read ({type(exc).__name__})"
    if stored:
        return _sendable(ApiKey(stored, "keyring", f"keyring {KEYRING_SERVICE}/{_keyring_username(profile)}")), None
    return None, None


def _sendable(found: ApiKey) -> ApiKey:
    """A key with whitespace or control characters is refused where it is read, naming where it came
    from: every request would fail with it, and `auth status` would call it fine."""
    problem = api_key_problem(found.value)
    if problem is None:
        return found
    raise ConfigError(
        f"the API key from {found.location} cannot be sent: {problem}",
        hint=f"fix or unset {API_KEY_ENV}"
        if found.source == "env"
        else "store the key again with `yield auth login`, or set " + API_KEY_ENV,
        kind="config.api_key.malformed",
    )


def store_api_key(profile: str, value: str) -> str:
    keyring = _keyring()
    try:
        keyring.set_password(KEYRING_SERVICE, _keyring_username(profile), value)
        kept = keyring.get_password(KEYRING_SERVICE, _keyring_username(profile))
    except Exception as exc:
        raise _backend_error(exc, "store") from None
    if kept != value:  # a backend that accepts and forgets (the null one): "stored" would be a lie
        raise ConfigError(
            "the OS keyring did not keep the API key: "
            + ("nothing" if kept is None else "another key")
            + " was read back",
            hint=f"set {API_KEY_ENV} instead, or configure a keyring backend that keeps secrets",
            kind="config.keyring.not_kept",
        )
    return f"keyring {KEYRING_SERVICE}/{_keyring_username(profile)}"


def delete_api_key(profile: str) -> bool:
    keyring = _keyring(plaintext_ok=True)  # removing a key from a plaintext store is what is wanted
    from keyring.errors import PasswordDeleteError

    try:
        keyring.delete_password(KEYRING_SERVICE, _keyring_username(profile))
    except PasswordDeleteError:
        return False
    except Exception as exc:
        raise _backend_error(exc, "remove") from None
    return True


def _keyring(*, plaintext_ok: bool = False) -> _KeyringModule:
    try:
        import keyring
        from keyring.backends.fail import Keyring as FailKeyring
    except Exception as exc:  # a broken install or a bad PYTHON_KEYRING_BACKEND
        raise ConfigError(
            f"the keyring library cannot be loaded ({type(exc).__name__})", hint=NO_BACKEND_HINT
        ) from None
    try:
        backend = keyring.get_keyring()
    except Exception as exc:
        raise ConfigError(f"no usable keyring backend ({type(exc).__name__})", hint=NO_BACKEND_HINT) from None
    if isinstance(backend, FailKeyring):
        raise ConfigError("no OS keyring backend is available", hint=NO_BACKEND_HINT)
    plain = plaintext_backend(backend)
    if plain and not plaintext_ok:
        raise ConfigError(
            f"the keyring backend {plain} keeps secrets in a file in plain (or merely encoded) text: "
            "the API key is not stored or read there",
            hint=PLAINTEXT_HINT,
            kind="config.keyring.plaintext",
        )
    return keyring


def check_can_store(profile: str) -> None:
    """Raise the ConfigError that storing a key for `profile` would end with: no backend, a plaintext
    one, or one that fails when used (locked, D-Bus down). Asked before a secret is typed in."""
    keyring = _keyring()
    try:  # a read goes through the same backend, unlocking it if it must, and leaves nothing behind
        keyring.get_password(KEYRING_SERVICE, _keyring_username(profile))
    except Exception as exc:
        raise _backend_error(exc, "store") from None


def keyring_problem() -> ConfigError | None:
    """Why the keyring cannot hold the API key here (none, unloadable, or plaintext), else None."""
    try:
        _keyring()
    except ConfigError as exc:
        return exc
    return None


def plaintext_backend(backend: object) -> str | None:
    """The name of a backend that writes secrets readably to disk (keyrings.alt's file and
    base64 stores, a chainer that includes one), else None. An encrypted file store is not one."""
    for one in [backend, *getattr(backend, "backends", ())]:
        cls = type(one)
        name = f"{cls.__module__}.{cls.__qualname__}"
        if (
            "plaintext" in name.lower()
            or "base64" in name.lower()
            or (cls.__module__.startswith("keyrings.alt") and "Encrypted" not in cls.__qualname__)
        ):
            return name
    return None


def _backend_error(exc: Exception, action: str) -> ConfigError:
    from keyring.errors import NoKeyringError

    if isinstance(exc, NoKeyringError):
        return ConfigError("no OS keyring backend is available", hint=NO_BACKEND_HINT)
    return ConfigError(f"could not {action} the API key in the OS keyring ({type(exc).__name__})", hint=NO_BACKEND_HINT)
