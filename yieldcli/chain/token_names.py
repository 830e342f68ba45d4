"""Tokens the strategy lists that are not built in, known by their own on-chain metadata.

For each such mint: its decimals from the mint account, its symbol and name from Token-2022's metadata
extension in the mint or from its Metaplex metadata account (`solana.token_metadata`), then `tokens.learn`
makes every face show and accept that symbol for the rest of the process.

What was learned is also written down per cluster (its genesis hash) in the data folder for a day, for
shell completion only, which may not ask the network on a Tab press. It is never read back as knowledge:
a symbol names the mint a transaction moves, and a file in the data folder is within an agent's reach
(a swapped entry would make "SDX" mean another listed mint), so each process asks the chain itself.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from yieldcli import tokens
from yieldcli.addresses import is_pubkey
from yieldcli.config import data_dir
from yieldcli.environment import Environment
from yieldcli.files import write_atomically

FILE_NAME = "token-names.json"
LIFETIME_SECONDS = 24 * 3600
_MAX_BYTES = 1 << 20


def _path() -> Path:
    return data_dir(Environment()) / FILE_NAME


def _remembered(path: Path) -> dict[str, dict[str, list[Any]]]:
    """cluster genesis hash -> mint -> [symbol, name, decimals, when]; only well-formed entries."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if path.stat().st_size < _MAX_BYTES else {}
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    return {
        cluster: {
            mint: entry
            for mint, entry in mints.items()
            if isinstance(entry, list)
            and len(entry) == 4
            and isinstance(entry[0], str)
            and isinstance(entry[1], str)
            and type(entry[2]) is int
            and type(entry[3]) in (int, float)
        }
        for cluster, mints in raw.items()
        if isinstance(cluster, str) and isinstance(mints, dict)
    }


def _fresh(entry: list[Any], now: float) -> bool:
    return bool(0 <= now - entry[3] < LIFETIME_SECONDS)


def remembered_symbols(now: float | None = None) -> list[str]:
    """Every symbol learned on any cluster less than a day ago (for shell completion: no question asked),
    those a built-in token or another mint already has left out."""
    stamp = time.time() if now is None else now
    found: dict[str, str] = {}
    for mints in _remembered(_path()).values():
        for mint, entry in mints.items():
            token = tokens.candidate(mint, entry[0], entry[1], entry[2])
            if token and _fresh(entry, stamp):
                found.setdefault(token.symbol.lower(), token.symbol)
    return sorted(found.values(), key=str.lower)


def _remember(cluster: str, learned: list[tokens.Token], now: float) -> None:
    path = _path()
    every = _remembered(path)
    mints = {mint: entry for mint, entry in every.get(cluster, {}).items() if _fresh(entry, now)}
    mints.update({t.mint: [t.symbol, t.name, t.decimals, now] for t in learned})
    every[cluster] = mints
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(every, sort_keys=True))
    except OSError:
        pass


async def learn_tokens(rpc: Any, mints: Iterable[str]) -> list[tokens.Token]:
    """The tokens of `mints` as this chain's metadata names them, read now (never from an earlier read):
    what a symbol is resolved with. Each is also shown by that name from now on (`tokens.learn`).
    Built-in mints are not asked about; a mint with no metadata of a symbol's shape, or one reading as a
    built-in symbol or as another listed mint's, is left out (shown by its address)."""
    unknown = sorted({m for m in mints if is_pubkey(m) and tokens.built_in(m) is None})
    if not unknown:
        return []
    learned = await _read(rpc, unknown)
    if learned:
        _remember(await rpc.genesis_hash(), learned, time.time())
    return learned


async def _read(rpc: Any, mints: list[str]) -> list[tokens.Token]:
    from solders.pubkey import Pubkey

    from yieldcli.solana import token_layout, token_metadata

    accounts = await rpc.multiple_accounts([Pubkey.from_string(m) for m in mints])
    named: dict[str, tuple[int, tuple[str, str] | None]] = {}
    for mint, account in zip(mints, accounts, strict=True):
        parsed = token_layout.parse_mint(str(account.owner), bytes(account.data)) if account else None
        if account is None or parsed is None:
            continue  # not a mint on this chain: nothing to learn
        names = None
        if parsed.program == token_layout.TOKEN_2022_PROGRAM:
            names = token_metadata.from_token_2022_mint(mint, bytes(account.data))
        named[mint] = (parsed.decimals, names)
    elsewhere = [m for m, (_, names) in named.items() if names is None]
    if elsewhere:
        metadata = await rpc.multiple_accounts(
            [Pubkey.from_string(token_metadata.metaplex_address(m)) for m in elsewhere]
        )
        for mint, account in zip(elsewhere, metadata, strict=True):
            if account is not None and str(account.owner) == token_metadata.METAPLEX_PROGRAM:
                named[mint] = (named[mint][0], token_metadata.from_metaplex(mint, bytes(account.data)))
    read = [tokens.candidate(mint, *names, decimals) for mint, (decimals, names) in named.items() if names]
    found = [token for token in read if token is not None]
    # Two listed mints whose symbols read alike: the symbol names neither (never the first read).
    claims = Counter(tokens.skeleton(token.symbol) for token in found)
    found = [token for token in found if claims[tokens.skeleton(token.symbol)] == 1]
    for token in found:
        tokens.learn(token.mint, token.symbol, token.name, token.decimals)  # shown by that name from now on
    return found
