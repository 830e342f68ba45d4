"""The checks of a setup before the chain: the config file and its values, the API key and whether
the service takes it, the service, the keypair (a file, standard input or a Ledger) and the Solana
CLI config. Each is one `Check` (`check.py`).

The RPC and its cluster are checked in `chain.py`; `run.py` runs them all in order and draws them.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from yieldcli import config as cfg
from yieldcli.chain.keys.ledger.signer import LedgerSigner
from yieldcli.chain.keys.ledger.urls import is_ledger_url
from yieldcli.cli.checks.check import Check, home_relative, ms_since
from yieldcli.cli.cli_errors import hint_for
from yieldcli.cli.config_values import config_problems
from yieldcli.cli.session import pubkey_of_keypair_file, sandbox_state_path
from yieldcli.errors import AuthError, ConfigError, ExitCode, NetworkError, YieldError
from yieldcli.files import reads_stdin
from yieldcli.secrets import find_api_key, keyring_problem, mask

if TYPE_CHECKING:
    from yieldcli.cli.session import Session

# Asked for when no strategy is configured: any answer after authentication (even 404) means the
# key was accepted; this one is the service's public strategy.
KEY_CHECK_STRATEGY_ID = "43620ba3-354c-456b-aa3c-5bf7fa46a6d4"


def config_file(session: Session) -> Check:
    path = Path(str(cfg.resolve_config_path(session.options.config, session.env).value)).expanduser()
    try:
        session.settings  # noqa: B018 -- reading the settings (the config file among them) is the check
    except ConfigError as exc:
        return Check("config file", "fail", exc.message, exc.hint or f"fix or remove {path}", ExitCode.CONFIG)
    if not path.exists():
        return Check("config file", "ok", f"{home_relative(session, path)} (absent: built-in defaults)")
    return Check("config file", "ok", home_relative(session, path))


def config_keys(session: Session) -> Check:
    """Names and values in the config file that no setting reads, or that `config set` would refuse."""
    problems = config_problems(session.settings.config)
    if not problems:
        return Check("config values", "ok", "every setting known and valid")
    more = f" (and {len(problems) - 1} more: `yield config validate`)" if len(problems) > 1 else ""
    return Check(
        "config values", "fail", problems[0] + more, "fix it with `yield config set`, or edit the file", ExitCode.CONFIG
    )


def api_key_source(session: Session) -> Check:
    if session.options.sandbox:
        return Check("API key", "ok", "the embedded sandbox's own key")

    try:
        found, why_none = find_api_key(session.env, session.profile)
    except ConfigError as exc:  # found, but it cannot be sent
        return Check("API key", "fail", exc.message, exc.hint or "", ExitCode.CONFIG)
    if found is not None and found.source == "env":
        problem = keyring_problem()
        if problem is not None and problem.kind == "config.keyring.plaintext":  # `auth login` would be refused here
            return Check(
                "API key",
                "warn",
                f"{mask(found.value)} from {found.location}; {problem.message}",
                "keep using the variable, or use an OS keyring",
            )
    if found is None:
        # The keyring unusable (none, or one that keeps secrets in plain text): logging in cannot help.
        hint = (
            f"set {cfg.API_KEY_ENV}, or use an OS keyring"
            if why_none
            else f"run `yield auth login` or set {cfg.API_KEY_ENV}"
        )
        return Check(
            "API key",
            "fail",
            f"none for profile {session.profile!r}" + (f" ({why_none})" if why_none else ""),
            hint,
            ExitCode.CONFIG,
        )
    detail = f"{mask(found.value)} from {found.location or found.source}"
    return Check("API key", "ok", detail + _served_sandbox_note(session))


def _served_sandbox_note(session: Session) -> str:
    """When the service is this machine's `yield sandbox serve`: whether its key survives a restart."""
    from yieldcli.sandbox.keyfile import served_key_note

    api_url = session.settings.get("api_url").value
    note = served_key_note(sandbox_state_path(session.env).parent, str(api_url)) if api_url else None
    return f" ({note})" if note else ""


def key_accepted(session: Session) -> Check:
    """One cheap authenticated request: the strategy's info. Any answer but 401 means the key passed."""
    strategy = _strategy_for_check(session)
    started = time.monotonic()
    try:
        session.client().answer("strategy", strategy)
    except AuthError as exc:
        return Check(
            "key accepted",
            "fail",
            f"the service refused the key: {exc.message}",
            "check the key in the customer portal, then `yield auth login`",
            ExitCode.AUTH,
        )
    except NetworkError as exc:
        return Check("key accepted", "fail", f"no answer: {exc.message}", hint_for(exc) or "", ExitCode.NETWORK)
    except YieldError as exc:  # 404 and friends come after authentication
        return Check("key accepted", "ok", f"accepted ({ms_since(started)}; the request itself said: {exc.message})")
    return Check("key accepted", "ok", f"accepted ({ms_since(started)})")


def _strategy_for_check(session: Session) -> str:
    try:
        return session.strategy(None)
    except YieldError:
        return KEY_CHECK_STRATEGY_ID


def service(session: Session) -> Check:
    url = "the embedded sandbox" if session.options.sandbox else str(session.settings.value("api_url"))
    started = time.monotonic()
    try:
        session.client().answer("health")
    except AuthError:
        return Check("service", "ok", f"{url} answers ({ms_since(started)}, health needs a key)")
    except NetworkError as exc:
        return Check(
            "service",
            "fail",
            f"{url} unreachable: {exc.message}",
            hint_for(exc) or "check the network and --api-url",
            ExitCode.NETWORK,
        )
    except YieldError as exc:
        return Check("service", "fail", f"{url}: {exc.message}", hint_for(exc) or "", ExitCode.SERVICE)
    return Check("service", "ok", f"{url} answers in {ms_since(started)}")


def keypair(session: Session, flag: str | None) -> Check:
    try:
        setting = session.keypair_source(flag)
    except ConfigError as exc:
        return Check(
            "keypair", "warn", "none configured: reads need a WALLET argument, nothing can be signed", exc.hint or ""
        )
    value = str(setting.value)
    if reads_stdin(value):
        return Check("keypair", "ok", "read from standard input when needed")

    if is_ledger_url(value):
        return ledger(value)

    path = Path(value).expanduser()
    try:
        pubkey = pubkey_of_keypair_file(path, setting.source)
    except ConfigError as exc:
        return Check("keypair", "fail", exc.message, exc.hint or "", ExitCode.CONFIG)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        return Check(
            "keypair",
            "warn",
            f"{home_relative(session, path)} ({pubkey}) is readable by others (mode {mode:04o})",
            f"chmod 600 {path}",
        )
    return Check("keypair", "ok", f"{home_relative(session, path)} ({pubkey}), private to you")


def ledger(url: str) -> Check:
    """A Ledger keypair: the device, the Solana app's version, blind signing, the configured key's address."""
    try:
        facts = _ledger_facts(url)
    except YieldError as exc:
        return Check("keypair", "fail", f"{url}: {exc.message}", hint_for(exc) or "", int(exc.exit_code))
    detail = (
        f"{url} on {facts['device']}: Solana app {facts['version']}, blind signing {facts['blind_signing']}; "
        f"{facts['path']} is {facts['address']}"
    )
    if facts["blind_signing"] == "off":
        return Check("keypair", "warn", detail, hint_for(YieldError("", kind="ledger.blind_signing_disabled")) or "")
    return Check("keypair", "ok", detail)


def solana_cli_config(session: Session) -> Check:
    path = cfg.solana_cli_config_path(session.env)
    found = cfg.read_solana_cli_config(session.env)
    if path.exists():
        shown = ", ".join(f"{k} {v}" for k, v in sorted(found.items())) or "no json_rpc_url or keypair_path in it"
        return Check("Solana CLI config", "ok", f"{home_relative(session, path)}: {shown}")
    # The sandbox's own RPC and keypair need no Solana CLI config (and are not started to say so).
    if session.options.sandbox or (session.settings.value("rpc_url") and session.settings.value("keypair")):
        return Check(
            "Solana CLI config",
            "ok",
            f"{home_relative(session, path)} absent (not needed: yield has its own RPC URL and keypair)",
        )
    return Check(
        "Solana CLI config",
        "warn",
        f"{home_relative(session, path)} absent",
        "`solana config set --url URL --keypair PATH`, or `yield config set rpc_url/keypair`",
    )


def _ledger_facts(url_text: str) -> dict[str, str]:
    """What is said of a Ledger keypair: the device, the app's version, blind signing, the address."""
    signer = LedgerSigner(url_text)
    config = signer.configuration()
    pubkey = signer.pubkey()
    return {
        "device": signer.device_name(),
        "version": config.version,
        "blind_signing": "on" if config.blind_signing else "off",
        "address": str(pubkey),
        "path": signer.url.path,
    }
