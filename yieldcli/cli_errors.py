"""Library errors as the command line reports them: the hint that names flags and commands.

The library (`yieldcli.api`, `yieldcli.client`) says what went wrong and gives each error a dotted
`kind`; only here does an error learn which `yield` flag or command fixes it. A kind is looked up
whole, then by its prefix ("network.timeout", then "network"); a hint the error already carries wins.
"""

from __future__ import annotations

from typing import NamedTuple

from yieldcli.errors import YieldError

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
    if error.hint:
        return error.hint
    kind = error.kind
    while kind:
        if kind in HINTS:
            return HINTS[kind]
        kind = kind.rpartition(".")[0]
    return None


def describe(error: YieldError) -> Described:
    return Described(int(error.exit_code), error.kind, error.message, hint_for(error))

