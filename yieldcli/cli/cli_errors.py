"""Every failure as the command line reports it: exit code, kind, message and hint, in one table.

The library (`yieldcli.api`, `yieldcli.client.clients`, `yieldcli.chain`) says what went wrong and gives each
error a dotted `kind`; only here does an error learn which `yield` flag or command fixes it. A kind is
looked up whole, then by its prefix ("network.timeout", then "network"); a hint the error already
carries wins. Exceptions that are not ours but are a user's doing (a port taken, a host that is not
this machine's, a bad command line) are described here too, so `app.main` has one place to ask.
"""

from __future__ import annotations

import errno
from typing import Any, NamedTuple

from yieldcli.errors import ExitCode, YieldError

LOGIN_HINT = "run `yield auth login` or set YIELD_API_KEY"

HINTS: dict[str, str] = {
    "auth": LOGIN_HINT,
    "auth.missing_key": LOGIN_HINT,
    "auth.rejected": LOGIN_HINT,
    "network": "check the network and the service URL (`yield config show` says which; "
    "`yield config set api_url URL` changes it)",
    "network.timeout": "check the network or raise --timeout",
    "network.rpc": "the RPC answered wrongly: try again, or choose another RPC with --url",
    "network.rpc.timeout": "try again, or choose another RPC with --url",
    "network.rpc.unreachable": "check the URL (--url) and your network connection",
    "config.keypair.missing": "create one with `solana-keygen new -o <path>` or pass --keypair <path>",
    "config.keypair.stdin_empty": "pipe a solana-keygen JSON keypair file, e.g. `yield ... --keypair - < id.json`",
    "config.profile.unknown": "choose one of those, or create it with `yield --profile NAME config set KEY VALUE`",
    "usage.keypair.empty": "pass -k/--keypair PATH, or - for standard input",
    "usage.nonce.missing": "create one with `yield nonce create`",
    "usage.nonce.authority": "pass the nonce's authority with --nonce-authority (see `yield nonce show`)",
    "usage.nonce.needs_ix": (
        "add --ix: a durable nonce is built into the transaction yield compiles from /ix instructions"
    ),
    "usage.amount.decimals": "pass the amount in base units with --raw",
    "service.lookup_table.missing": "check that --url points to the cluster the service builds transactions for",
    "config.journal.damaged": "check each signature in it with `yield tx status`, then move the file aside",
    "network.tls": "check --api-url; for a private CA, set SSL_CERT_FILE to its certificate",
    "network.proxy": "check HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY (credentials go in the proxy URL)",
    "service.redirect": "point --api-url at the final address",
    "usage.url": "check --api-url, YIELD_API_URL or the profile's api_url; `yield config show` says which is used",
    "usage.address": "choose another --host or --port, or stop what is using it",
    "usage.remote_host": "`yield sandbox serve --allow-remote` listens on it anyway",
    "bug": "run again with --debug and report it",
    # The transaction pipeline (`yieldcli.chain.transact.engine`): `{signature}` and `{action}` are the error's.
    "usage.missing_signers": "use --sign, have the other signers run `yield tx sign`, then `yield tx send`",
    "usage.not_a_signer": "pass the right --keypair",
    "usage.asset.not_a_mint": "check --asset, and that -u names the cluster the service works on",
    "usage.no_keypair": "pass --keypair or set YIELD_KEYPAIR",
    "refused.unchecked": "--send needs the check: drop --no-simulate and use a reachable RPC (--url), or --sign only",
    "refused.landed_before": (
        "see it with `yield tx status {signature}` and check your position; add --again to send another {action}"
    ),
    "simulation": "run without --send to see the logs",
    "simulation.review": "the logs are in the review above",
    "refused.unchecked.review": "drop --no-simulate, and use a reachable RPC (--url)",
    "refused.mismatch.review": "do not sign it; the service may be faulty or compromised",
    "tx.failed": "the logs above say why",
    "tx.expired": "run the command again for a new transaction",
    "tx.pending": "check later with `yield tx status {signature}`",
    "tx.pending.unknown": "check it with `yield tx status {signature}`",
    "tx.pending.earlier": "check it with `yield tx status {signature}`",
    "tx.pending.earlier.cluster_changed": (
        "check it with `yield tx status {signature} --url URL` on an RPC of {cluster_was}; "
        "if that chain is gone (a local validator reset), `yield tx forget {signature}`"
    ),
    "tx.pending.rpc_disagrees": "check it with `yield tx status {signature}`, on another RPC if you can",
    "tx.interrupted": "check it with `yield tx status {signature}`",
    "declined.no_confirm": "answer the prompt on a terminal, or add --yes",
    "refused.mismatch.unstated": (
        "nothing was signed; if that is what you meant, state it with --expect ACTION:ASSET:AMOUNT "
        "(e.g. --expect deposit:USDC:10)"
    ),
    "refused.fee.max": "raise --max-fee, or give a lower --priority-fee",
    "refused.fee.auto": "give --max-fee LAMPORTS to allow it, or a fixed --priority-fee",
    "refused.fee.size": "send it without --priority-fee, or ask the service for the instructions (--ix)",
    "refused.cluster": "choose an RPC on {expected_cluster} with --url",
    "refused.cluster.blockhash": "check --url, or request a new transaction",
    # A Ledger (`yieldcli.chain.keys.ledger`): what to do at the device.
    "ledger.not_found": (
        "connect the Ledger, unlock it and open the Solana app (for the Speculos emulator: YIELD_LEDGER_APDU=host:port)"
    ),
    "ledger.locked": "unlock the Ledger with its PIN, open the Solana app, then run the command again",
    "ledger.app_not_open": "open the Solana app on the Ledger, then run the command again",
    "ledger.blind_signing_disabled": (
        "turn blind signing on at the Ledger: Solana app > Settings > Allow blind sign > Yes; "
        "then run the command again"
    ),
    "ledger.timeout": "approve or reject on the Ledger sooner, or raise YIELD_LEDGER_TIMEOUT (seconds)",
    "ledger.ambiguous": "name one with usb://ledger/<WALLET_ID> (its `yield ledger address` with no --key)",
    "ledger.bad_request": "update the Solana app with Ledger Live",
    "usage.ledger_url": "use usb://ledger, usb://ledger?key=N or usb://ledger?key=N/M",
}

# A server we start (`yield sandbox serve`, --sandbox) that cannot bind: errno → (message, hint).
LISTEN_ERRORS: dict[int, tuple[str, str | None]] = {
    errno.EADDRINUSE: (
        "cannot listen on that port: it is already in use",
        "choose another --port, or --port 0 for a free one",
    ),
    errno.EADDRNOTAVAIL: ("cannot listen on that --host: it is not an address of this machine", None),
    errno.EACCES: (
        "cannot listen on that port: permission denied",
        "ports below 1024 need privileges; choose another --port",
    ),
}


class Described(NamedTuple):
    code: int
    kind: str
    message: str
    hint: str | None
    signature: str | None = None  # a transaction sent (or signed) before the error: never lost

    def to_json(self) -> dict[str, dict[str, object]]:
        """The JSON modes' error object: {"error": {"code", "kind", "message", "hint"}}, and "signature"
        when a transaction was sent before it (a script checks it with `yield tx status`)."""
        error: dict[str, object] = {"code": self.code, "kind": self.kind, "message": self.message, "hint": self.hint}
        if self.signature is not None:
            error["signature"] = self.signature
        return {"error": error}


def hint_for(error: YieldError) -> str | None:
    """The error's own hint, else the table's for its kind, filled in with the error's fields."""
    if error.hint:
        return error.hint
    return _hint_for_kind(error.kind, vars(error))


def _hint_for_kind(kind: str, fields: dict[str, object] | None = None) -> str | None:
    while kind:
        if kind in HINTS:
            try:
                return HINTS[kind].format_map(fields or {})
            except (KeyError, AttributeError, IndexError, ValueError):
                return None  # a field the hint names is missing: no hint rather than a wrong one
        kind = kind.rpartition(".")[0]
    return None


def describe(error: YieldError) -> Described:
    signature = getattr(error, "signature", None)
    return Described(
        int(error.exit_code),
        error.kind,
        error.message,
        hint_for(error),
        signature if isinstance(signature, str) else None,
    )


def _known(code: int, kind: str, message: str, hint: str | None = None) -> Described:
    return Described(int(code), kind, message, hint if hint is not None else _hint_for_kind(kind))


def describe_exception(error: BaseException) -> Described | None:
    """Any exception the command line may report on one line; None for a bug (exit 1, traceback with --debug)."""
    if isinstance(error, YieldError):
        return describe(error)
    if isinstance(error, BaseExceptionGroup):
        # asyncio and anyio task groups wrap what a task raised; one error inside is that error.
        leaves = _leaves(error)
        return describe_exception(leaves[0]) if len(leaves) == 1 else None
    described = _describe_click(error)
    if described is not None:
        return described
    origin = _raised_in(error)
    if isinstance(error, OSError) and (error.errno in LISTEN_ERRORS or origin == "socketserver"):
        # Only a server binds: a --host/--port we cannot use is the user's to change, not a bug.
        if error.errno in LISTEN_ERRORS:
            message, hint = LISTEN_ERRORS[error.errno]
            return _known(ExitCode.USAGE, "usage.address", message, hint)
        return _known(
            ExitCode.USAGE, "usage.address", f"cannot listen on that --host/--port: {error.strerror or error}"
        )
    if isinstance(error, ValueError) and origin == "yieldcli.sandbox.server":
        # The sandbox server refuses a non-loopback host unless told otherwise.
        return _known(ExitCode.USAGE, "usage.remote_host", str(error))
    return None


def describe_any(error: BaseException) -> Described:
    """As `describe_exception`, with a bug described as one: exit 1 and a plea to report it."""
    described = describe_exception(error)
    if described is not None:
        return described
    return _known(ExitCode.UNEXPECTED, "bug", f"unexpected error: {type(error).__name__}: {error}")


def _describe_click(error: BaseException) -> Described | None:
    """The command line's own parser (typer vendors click) and an interrupt."""
    import typer
    from typer import _click as click

    if isinstance(error, (typer.Abort, KeyboardInterrupt)):
        return Described(int(ExitCode.INTERRUPTED), "interrupted", "interrupted", None)
    if isinstance(error, click.exceptions.UsageError):
        ctx: Any = error.ctx
        where = ctx.command_path if ctx else "yield"
        return Described(int(ExitCode.USAGE), "usage", error.format_message(), f"see `{where} --help`")
    if isinstance(error, click.exceptions.ClickException):
        return Described(int(ExitCode.USAGE), "usage", error.format_message(), None)
    return None


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    found: list[BaseException] = []
    for inner in group.exceptions:
        found.extend(_leaves(inner) if isinstance(inner, BaseExceptionGroup) else [inner])
    return found


def _raised_in(error: BaseException) -> str:
    """The module of the innermost frame of the traceback: where the exception was raised."""
    tb = error.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return str(tb.tb_frame.f_globals.get("__name__", ""))
