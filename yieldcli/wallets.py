"""Many wallets in one call: the wallets file, and querying them concurrently over one connection pool."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TextIO, TypeVar

from yieldcli.addresses import is_pubkey
from yieldcli.concurrency import ordered_map
from yieldcli.errors import UsageError, YieldError
from yieldcli.files import read_small_stream, reads_stdin
from yieldcli.numbers import quoted

T = TypeVar("T")
# About 360,000 addresses, one per line.
WALLETS_MAX_CHARS = 16 << 20


def read_wallets_file(source: str, stdin: TextIO) -> list[str]:
    """One address per line; blank lines and `#` comments ignored; every bad line reported at once."""
    if reads_stdin(source):
        text = read_small_stream(stdin, limit=WALLETS_MAX_CHARS, what="the wallets list", error=UsageError)
        name = "standard input"
    else:
        # Any readable file, a pipe from `<(...)` included, but never more than the limit: /dev/zero
        # would otherwise fill memory.
        try:
            with open(source, encoding="utf-8") as handle:
                text = handle.read(WALLETS_MAX_CHARS + 1)
            if len(text) > WALLETS_MAX_CHARS:
                raise UsageError(f"wallets file {source} is too large (more than {WALLETS_MAX_CHARS} characters)")
        except OSError as exc:
            raise UsageError(f"cannot read wallets file {source}: {exc.strerror or type(exc).__name__}") from None
        except UnicodeDecodeError:
            raise UsageError(f"wallets file {source} is not UTF-8 text") from None
        name = source
    wallets: list[str] = []
    bad: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        address = line.split("#", 1)[0].strip()
        if not address:
            continue
        if is_pubkey(address):
            wallets.append(address)
        else:
            bad.append(f"line {number}: {quoted(address)}")
    if bad:
        shown = "; ".join(bad[:10]) + (f"; and {len(bad) - 10} more" if len(bad) > 10 else "")
        raise UsageError(f"invalid wallet addresses in {name}: {shown}", hint="one base58 address per line")
    if not wallets:
        raise UsageError(f"no wallet addresses in {name}")
    return wallets


def in_order(
    wallets: Iterable[str], work: Callable[[str], T], concurrency: int
) -> Iterator[tuple[str, T | YieldError]]:
    """(wallet, result or the error it ended in), in input order: one wallet failing spares the others."""
    for wallet, future in ordered_map(work, wallets, concurrency, "wallet"):
        error = future.exception()
        if error is not None and not isinstance(error, YieldError):
            raise error
        yield wallet, error if error is not None else future.result()
