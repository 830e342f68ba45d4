"""Library errors as the command line reports them: the hint that names flags and commands.

The library (`yieldcli.api`, `yieldcli.client`) says what went wrong and gives each error a dotted
`kind`; only here does an error learn which `yield` flag or command fixes it. A kind is looked up
whole, then by its prefix ("network.timeout", then "network"); a hint the error already carries wins.
"""

from __future__ import annotations

import errno
from typing import NamedTuple

from yieldcli.errors import ExitCode, YieldError

LOGIN_HINT = "run `yield auth login` or set YIELD_API_KEY"

HINTS: dict[str, str] = {
    "auth": LOGIN_HINT,
    "auth.missing_key": LOGIN_HINT,
    "auth.rejected": LOGIN_HINT,
    "network": "check --api-url and the network",
    "network.timeout": "check the network or raise --timeout",
    "network.tls": "check --api-url; for a private CA, set SSL_CERT_FILE to its certificate",
    "network.proxy": "check HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY (credentials go in the proxy URL)",
    "service.redirect": "point --api-url at the final address",
    "usage.url": "check --api-url, YIELD_API_URL or the profile's api_url; `yield config show` says which is used",
    "usage.address": "choose another --host or --port, or stop what is using it",
    # The transaction pipeline (`yieldcli.chain.transact`): `{signature}` and `{action}` are the error's.
    "usage.missing_signers": "use --sign, have the other signers run `yield tx sign`, then `yield tx send`",
    "usage.not_a_signer": "pass the right --keypair",
    "usage.no_keypair": "pass --keypair or set YIELD_KEYPAIR",
    "refused.unchecked": "--send needs the check: drop --no-simulate and use a reachable RPC (--url), or --sign only",
    "refused.landed_before": "check your position first; add --again to send another {action}",
    "simulation": "run without --send to see the logs",
    "tx.failed": "the logs above say why",
    "tx.expired": "run the command again for a new transaction",
    "tx.pending": "check later with `yield tx status {signature}`",
    "tx.pending.unknown": "check it with `yield tx status {signature}`",
    "tx.pending.earlier": "check it with `yield tx status {signature}`",
    "tx.interrupted": "check it with `yield tx status {signature}`",
    "declined.no_confirm": "answer the prompt on a terminal, or add --yes",
    "refused.fee.max": "raise --max-fee, or give a lower --priority-fee",
    "refused.fee.auto": "give --max-fee LAMPORTS to allow it, or a fixed --priority-fee",
    "refused.fee.size": "send it without --priority-fee, or ask the service for the instructions (--ix)",
    "refused.cluster": "choose an RPC on {expected_cluster} with --url",
    "refused.cluster.blockhash": "check --url, or request a new transaction",
}

# Errors from outside the library that are a user's doing (a port taken, an address not on this
# machine), not a bug: without this they would end as exit 1, "unexpected error".
ADDRESS_ERRORS = {
    errno.EADDRINUSE: "the address is already in use",
    errno.EADDRNOTAVAIL: "the address is not one of this machine's",
}


class Described(NamedTuple):
    code: int
    kind: str
    message: str
    hint: str | None

    def to_json(self) -> dict[str, dict[str, object]]:
        """The JSON modes' error object: {"error": {"code", "kind", "message", "hint"}}."""
        return {"error": {"code": self.code, "kind": self.kind, "message": self.message, "hint": self.hint}}


def hint_for(error: YieldError) -> str | None:
    """The error's own hint, else the table's for its kind, filled in with the error's fields."""
    if error.hint:
        return error.hint
    kind = error.kind
    while kind:
        if kind in HINTS:
            try:
                return HINTS[kind].format_map(vars(error))
            except (KeyError, AttributeError, IndexError, ValueError):
                return None  # a field the hint names is missing: no hint rather than a wrong one
        kind = kind.rpartition(".")[0]
    return None


def describe(error: YieldError) -> Described:
    return Described(int(error.exit_code), error.kind, error.message, hint_for(error))


def describe_exception(error: BaseException) -> Described | None:
    """Any exception the command line may report on one line; None for a bug (exit 1, traceback with --debug)."""
    if isinstance(error, YieldError):
        return describe(error)
    if isinstance(error, OSError) and error.errno in ADDRESS_ERRORS:
        message = f"cannot listen: {ADDRESS_ERRORS[error.errno]}"
        return Described(int(ExitCode.USAGE), "usage.address", message, HINTS["usage.address"])
    return None

