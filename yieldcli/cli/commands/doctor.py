"""`yield doctor`: check a setup end to end, each check ok, warn or fail with a hint.

Exit 0 when nothing fails; otherwise the exit code of the first failure (3 config, 4 auth, 5 service,
6 network). The RPC's cluster is told by its genesis hash and compared with the cluster the service
builds transactions for: a devnet RPC beside a mainnet service makes every review's simulation
meaningless, so that is a failure, not a warning.
"""

from __future__ import annotations

import os
import stat
import textwrap
import time
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import typer

from yieldcli import config as cfg
from yieldcli.cli.cli_errors import hint_for
from yieldcli.cli.commands import options as opt
from yieldcli.cli.commands.context import session_of
from yieldcli.cli.render.text import printable
from yieldcli.cli.session import pubkey_of_keypair_file
from yieldcli.errors import AuthError, ConfigError, ExitCode, NetworkError, ServiceError, YieldError
from yieldcli.files import reads_stdin
from yieldcli.solana.cluster import GENESIS_HASHES, SERVICE_CLUSTER, cluster_named
from yieldcli.urls import is_loopback

# Asked for when no strategy is configured: any answer after authentication (even 404) means the
# key was accepted; this one is the service's public strategy.
KEY_CHECK_STRATEGY_ID = "43620ba3-354c-456b-aa3c-5bf7fa46a6d4"


def failure(check: Check, message: str) -> YieldError:
    """The error a failed check ends the command with: its class carries the exit code."""
    classes: dict[int, type[YieldError]] = {
        ExitCode.CONFIG: ConfigError,
        ExitCode.AUTH: AuthError,
        ExitCode.NETWORK: NetworkError,
    }
    return classes.get(check.code, ServiceError)(message, hint=check.hint or None)


class Check(NamedTuple):
    name: str
    status: str  # ok, warn, fail
    detail: str
    hint: str = ""
    code: int = ExitCode.OK  # the exit code a failure stands for

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "hint": self.hint or None}


def _home(session, path: Path | str) -> str:
    """A path as people write it: `~/...` under the home directory."""
    text, home = str(path), session.env.get("HOME")
    return "~" + text[len(home) :] if home and text.startswith(home.rstrip("/") + "/") else text


def _ms(started: float) -> str:
    return f"{(time.monotonic() - started) * 1000:.0f} ms"


def config_file(session) -> Check:
    path = Path(str(cfg.resolve_config_path(session.options.config, session.env).value)).expanduser()
    try:
        session.settings  # noqa: B018 -- reading the settings (the config file among them) is the check
    except ConfigError as exc:
        return Check("config file", "fail", exc.message, exc.hint or f"fix or remove {path}", ExitCode.CONFIG)
    if not path.exists():
        return Check("config file", "ok", f"{_home(session, path)} (absent: built-in defaults)")
    return Check("config file", "ok", _home(session, path))


def api_key_source(session) -> Check:
    if session.options.sandbox:
        return Check("API key", "ok", "the embedded sandbox's own key")
    from yieldcli.secrets import find_api_key, mask

    found, why_none = find_api_key(session.env, session.profile)
    if found is not None and found.source == "env":
        from yieldcli.secrets import keyring_problem

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
    return Check("API key", "ok", f"{mask(found.value)} from {found.location or found.source}")


def key_accepted(session) -> Check:
    """One cheap authenticated request: the strategy's info. Any answer but 401 means the key passed."""
    strategy = _strategy_for_check(session)
    started = time.monotonic()
    try:
        session.api().strategy_info(strategy)
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
        return Check("key accepted", "ok", f"accepted ({_ms(started)}; the request itself said: {exc.message})")
    return Check("key accepted", "ok", f"accepted ({_ms(started)})")


def _strategy_for_check(session) -> str:
    try:
        return session.strategy(None)
    except YieldError:
        return KEY_CHECK_STRATEGY_ID


def service(session) -> Check:
    url = "the embedded sandbox" if session.options.sandbox else str(session.settings.value("api_url"))
    started = time.monotonic()
    try:
        session.api().health()
    except AuthError:
        return Check("service", "ok", f"{url} answers ({_ms(started)}, health needs a key)")
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
    return Check("service", "ok", f"{url} answers in {_ms(started)}")


def _genesis(url: str, timeout: float) -> tuple[str, str]:
    """The RPC's genesis hash, and how long it took to answer (not counting loading the client)."""
    import asyncio

    from yieldcli.chain.rpc import Rpc

    async def ask() -> tuple[str, str]:
        async with Rpc(url, timeout=timeout) as rpc:
            started = time.monotonic()
            return str(await rpc.call("getGenesisHash")), _ms(started)

    return asyncio.run(ask())


def _expected_cluster(session) -> tuple[str | None, str]:
    """The service's cluster, as a genesis hash (None when it cannot be told), and its name."""
    if session.options.sandbox:
        return _genesis(session.sandbox().rpc_url, session.timeout())[0], "the sandbox's cluster"
    host = urlsplit(str(session.settings.value("api_url"))).hostname

    if is_loopback(host):
        return None, "a local service"

    return GENESIS_HASHES[SERVICE_CLUSTER], SERVICE_CLUSTER


def rpc(session, url_flag: str | None) -> list[Check]:
    from yieldcli.chain.rpc import redact_url

    try:
        url = session.rpc_url(url_flag)
    except YieldError as exc:
        return [Check("RPC", "fail", exc.message, exc.hint or "", ExitCode.CONFIG)]
    shown = redact_url(url)
    try:
        genesis, took = _genesis(url, session.timeout())
    except YieldError as exc:
        return [
            Check(
                "RPC",
                "fail",
                f"{shown}: {exc.message}",
                exc.hint or "check -u/--url, rpc_url or the Solana CLI config",
                ExitCode.NETWORK,
            )
        ]
    checks = [Check("RPC", "ok", f"{shown} answers in {took}")]

    cluster = cluster_named(genesis) or f"unknown cluster (genesis {genesis})"
    try:
        expected, expected_name = _expected_cluster(session)
    except YieldError as exc:
        return checks + [Check("RPC cluster", "warn", f"{cluster}; the service's cluster is unknown: {exc.message}")]
    if expected is None:
        checks.append(
            Check(
                "RPC cluster",
                "warn",
                f"{cluster}; cannot tell which cluster {expected_name} builds for",
                "make sure the RPC is the cluster the service builds for",
            )
        )
    elif genesis != expected:
        checks.append(
            Check(
                "RPC cluster",
                "fail",
                f"{cluster}, but the service builds for {expected_name}",
                "point -u/--url (or rpc_url, or the Solana CLI's json_rpc_url) at the service's cluster",
                ExitCode.CONFIG,
            )
        )
    else:
        checks.append(Check("RPC cluster", "ok", f"{cluster}: {expected_name}, as the service's"))
    if checks[-1].status != "fail":  # on the wrong cluster, its program says nothing more
        checks.append(strategy_program(session, url, genesis))
        from yieldcli.cli.commands.trust_cmd import trusted_check

        checks.append(Check("trusted destinations", **trusted_check(session, genesis)))
    return checks


def strategy_program(session, url: str, genesis: str) -> Check:
    """The program the intent guard trusts on this cluster: pinned, and deployed there."""
    import asyncio

    from yieldcli.chain.pinned import pinned_program, setting_problem
    from yieldcli.chain.rpc import Rpc

    setting = session.settings.get("strategy_program")
    configured = str(setting.value) if setting.value else None
    program = pinned_program(genesis, configured)
    problem = setting_problem(genesis, configured)
    if problem:
        return Check("strategy program", "warn", problem, "yield config unset strategy_program")

    async def ask() -> Any:
        async with Rpc(url, timeout=session.timeout()) as client:
            return await client.call("getAccountInfo", [program, {"encoding": "base64"}])

    try:
        answer = asyncio.run(ask())
        found = answer.get("value") if isinstance(answer, dict) else None
    except YieldError as exc:
        return Check("strategy program", "warn", f"{program}: could not be read: {exc.message}")
    source = f"from {setting.source}" if configured else "pinned for this cluster"
    if not found or not found.get("executable"):
        # Named by a setting (or mainnet's pin) it must be there; the sandbox's default only on the sandbox.
        must_be_there = configured or genesis == GENESIS_HASHES[SERVICE_CLUSTER]
        return Check(
            "strategy program",
            "fail" if must_be_there else "warn",
            f"{program} ({source}) is not a program on this cluster: deposits and withdrawals will be refused",
            "set strategy_program to the strategy's program on this cluster",
            ExitCode.CONFIG,
        )
    return Check("strategy program", "ok", f"{program} ({source}), deployed")


def keypair(session, flag: str | None) -> Check:
    try:
        setting = session.keypair_source(flag)
    except ConfigError as exc:
        return Check(
            "keypair", "warn", "none configured: reads need a WALLET argument, nothing can be signed", exc.hint or ""
        )
    value = str(setting.value)
    if reads_stdin(value):
        return Check("keypair", "ok", "read from standard input when needed")
    from yieldcli.chain.ledger.urls import is_ledger_url

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
            f"{_home(session, path)} ({pubkey}) is readable by others (mode {mode:04o})",
            f"chmod 600 {path}",
        )
    return Check("keypair", "ok", f"{_home(session, path)} ({pubkey}), private to you")


def ledger(url: str) -> Check:
    """A Ledger keypair: the device, the Solana app's version, blind signing, the configured key's address."""
    from yieldcli.cli.commands.ledger_cmd import doctor_facts

    try:
        facts = doctor_facts(url)
    except YieldError as exc:
        return Check("keypair", "fail", f"{url}: {exc.message}", hint_for(exc) or "", int(exc.exit_code))
    detail = (
        f"{url} on {facts['device']}: Solana app {facts['version']}, blind signing {facts['blind_signing']}; "
        f"{facts['path']} is {facts['address']}"
    )
    if facts["blind_signing"] == "off":
        return Check("keypair", "warn", detail, hint_for(YieldError("", kind="ledger.blind_signing_disabled")) or "")
    return Check("keypair", "ok", detail)


def solana_cli_config(session) -> Check:
    path = cfg.solana_cli_config_path(session.env)
    found = cfg.read_solana_cli_config(session.env)
    if path.exists():
        shown = ", ".join(f"{k} {v}" for k, v in sorted(found.items())) or "no json_rpc_url or keypair_path in it"
        return Check("Solana CLI config", "ok", f"{_home(session, path)}: {shown}")
    # The sandbox's own RPC and keypair need no Solana CLI config (and are not started to say so).
    if session.options.sandbox or (session.settings.value("rpc_url") and session.settings.value("keypair")):
        return Check(
            "Solana CLI config",
            "ok",
            f"{_home(session, path)} absent (not needed: yield has its own RPC URL and keypair)",
        )
    return Check(
        "Solana CLI config",
        "warn",
        f"{_home(session, path)} absent",
        "`solana config set --url URL --keypair PATH`, or `yield config set rpc_url/keypair`",
    )


def doctor(
    ctx: typer.Context,
    url: opt.RpcUrl = None,
    keypair_path: opt.Keypair = None,
    output: opt.Output = None,
    json_: opt.Json = False,
) -> None:
    """Check the setup: config, API key, service, RPC and its cluster, keypair, Solana CLI config.

    Exit 0 when no check fails. Example: yield doctor -o json | jq '.checks[] | select(.status != "ok")'
    """
    session = session_of(ctx)
    out = session.output(output, json_)
    checks = [config_file(session)]
    if checks[0].status != "fail":
        checks.append(api_key_source(session))
        checks.append(service(session))
        if checks[-2].status != "fail":
            checks.append(key_accepted(session))
        checks.extend(rpc(session, url))
        checks.append(keypair(session, keypair_path))
        checks.append(solana_cli_config(session))
    report(out, checks)
    failed = [c for c in checks if c.status == "fail"]
    if failed:
        first = failed[0]
        raise failure(
            first, f"{len(failed)} check{'s' * (len(failed) > 1)} failed (first: {first.name}: {first.detail})"
        )


COLOURS = {"ok": "green", "warn": "yellow", "fail": "red"}


def _lines(out, checks: list[Check]) -> list[str]:
    """`status  name  detail`, the detail and hint wrapped under themselves on a terminal."""
    from yieldcli.cli.render import pager

    width = max(len(c.name) for c in checks)
    indent = " " * (width + 8)
    room = max((pager.screen_size(out.env)[0] if out.env.stdout_isatty else 4096) - len(indent), 20)
    lines: list[str] = []
    for c in checks:
        status = out.paint(c.status.ljust(4), COLOURS[c.status], stderr=False)
        for text, first in (
            (c.detail, f"{status}  {c.name.ljust(width)}  "),
            (f"hint: {c.hint}" if c.hint else "", indent),
        ):
            wrapped = textwrap.wrap(printable(text), room, break_long_words=False, break_on_hyphens=False)
            # One prefix a line: `first`, then `indent` (one more than needed: the shorter side ends it).
            prefixes = [first] + [indent] * len(wrapped)
            lines.extend(prefix + part for prefix, part in zip(prefixes, wrapped, strict=False))
    return lines


def report(out, checks: list[Check]) -> None:
    rows = [c.to_dict() for c in checks]
    out.records(
        rows,
        fields=("name", "status", "detail", "hint"),
        table=lambda: out.lines(_lines(out, checks)),
        whole={"ok": not any(c.status == "fail" for c in checks), "checks": rows},
    )
