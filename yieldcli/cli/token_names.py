"""Tokens a command shows or is given that `yield` does not ship with: known by their own on-chain metadata.

The strategy's listing names mints only; a listed mint that is not built in is asked about on the RPC of
this run (`Client.learn_tokens`) before it is shown (`strategy info`) or before a symbol that is no
built-in one is refused (`--asset`, `--expect`): its symbol then names it in tables, reviews and
completion. The chain not answering is said in one warning and the mint is shown by its address.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Optional

from yieldcli import tokens
from yieldcli.errors import NetworkError, UsageError

if TYPE_CHECKING:
    from yieldcli.cli.session import Session


def learn(session: Session, mints: Iterable[str], rpc_flag: Optional[str] = None) -> None:
    """Learn the listed mints not known yet; a chain that does not answer is a warning, not a failure."""
    mints = [mint for mint in mints if tokens.by_mint(mint) is None]
    if not mints:
        return
    from yieldcli.cli.writing.flow import chain_settings

    try:
        session.client(chain=chain_settings(session, rpc_flag)).learn_tokens(mints)
    except NetworkError as exc:
        shown = ", ".join(mints)
        session.output().warn(f"the names of {shown} were not read from the chain: {exc.message}")


def resolve_asset(
    session: Session,
    value: str,
    flag: str = "--asset",
    *,
    strategy: Optional[str] = None,
    rpc_flag: Optional[str] = None,
) -> str:
    """A symbol (built in, or of a token the strategy lists, by its metadata) or a mint address, as a mint;
    anything else is refused (exit 2) with the known symbols, those of the strategy's tokens included.
    With no strategy to ask about, the built-in symbols are all there are."""
    from yieldcli.client.listed_tokens import resolve_listed, worth_asking

    if not worth_asking(value):
        return tokens.resolve_asset(value, flag)
    try:
        strategy_id = session.strategy(strategy)
    except UsageError:
        return tokens.resolve_asset(value, flag)
    from yieldcli.cli.writing.flow import chain_settings

    try:
        return resolve_listed(session.client(chain=chain_settings(session, rpc_flag)), value, flag, strategy_id)
    except NetworkError as exc:
        session.output().warn(f"the strategy's tokens were not read from the chain: {exc.message}")
        return tokens.resolve_asset(value, flag)
