"""The hint of a refused plain transfer to a destination the user has not trusted: the exact command
that trusts it (`yield config trust add`), with the options this run was given that decide the
cluster and the trust file."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from yieldcli.tokens import by_mint
from yieldcli.urls import redact_url

if TYPE_CHECKING:
    from yieldcli.cli.session import Session
    from yieldcli.errors import YieldError


def trust_hint(session: Session, error: YieldError, url_flag: str | None) -> str | None:
    """The refusal's hint: the exact command that trusts the destination, with the options this run
    was given that decide the cluster and the file (`--sandbox`, `--profile`, `--config`, `-u`)."""
    destination, mint, strategy = (getattr(error, name, None) for name in ("destination", "mint", "strategy"))
    if not (destination and mint and strategy):
        return None
    known = by_mint(str(mint))
    asset = known.symbol if known else str(mint)  # an unknown token: its whole mint address
    words = ["yield", *_global_flags(session), "config", "trust", "add", str(destination), "--asset", asset]
    words += ["--strategy", str(strategy)]
    if url_flag:
        words += ["-u", _shown_url(url_flag)]
    return (
        "nothing was signed; the service may be faulty or compromised. If you know "
        f"{destination} is the strategy's, trust it for deposits with `{shlex.join(words)}`"
    )


def _global_flags(session: Session) -> list[str]:
    flags = ["--sandbox"] if session.options.sandbox else []
    if session.settings.profile.source == "flag":
        flags += ["--profile", str(session.settings.profile.value)]
    if session.options.config:
        flags += ["--config", str(session.options.config)]
    return flags


def _shown_url(url: str) -> str:
    """The -u value as given, unless it carries a credential (providers put keys in URLs)."""
    return url if "://" not in url or redact_url(url) == url else "YOUR_RPC_URL"
