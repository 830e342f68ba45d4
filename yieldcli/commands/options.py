"""Options shared by several commands, spelled and explained the same way everywhere."""

from enum import Enum
from typing import Annotated, Optional

import typer

INT32_MAX = 2**31 - 1


class Order(str, Enum):
    asc = "asc"
    desc = "desc"


Output = Annotated[
    Optional[str],
    typer.Option("--output", "-o", help="table, json, ndjson or csv (default: table on a terminal, json otherwise).", show_default=False),
]
Json = Annotated[bool, typer.Option("--json", help="Short for -o json.")]
Wallet = Annotated[
    Optional[str],
    typer.Argument(metavar="WALLET", help="Wallet address (default: the configured keypair's public key).", show_default=False),
]
Strategy = Annotated[
    Optional[str],
    typer.Option("--strategy", help="Strategy id (default: YIELD_STRATEGY, then the profile's strategy).", show_default=False),
]
Asset = Annotated[
    Optional[str],
    typer.Option("--asset", help="Filter by asset: a mint address or a known symbol (USDC, USDT, SOL, ...).", show_default=False),
]
SortBy = Annotated[Optional[str], typer.Option("--sort-by", help="Field to sort by, e.g. balance.", show_default=False)]
SortOrder = Annotated[Optional[Order], typer.Option("--order", help="Sort order: asc or desc.", show_default=False)]
Page = Annotated[
    Optional[int],
    typer.Option("--page", min=0, max=INT32_MAX, help="Page number (1-based).", show_default=False),
]
Limit = Annotated[
    Optional[int],
    typer.Option("--limit", min=0, max=INT32_MAX, help="Items per page.", show_default=False),
]
All = Annotated[bool, typer.Option("--all", help="Follow every page and return all items.")]
WalletsFile = Annotated[
    Optional[str],
    typer.Option("--wallets-file", help="Query every wallet in FILE (one per line, # comments; - for stdin) instead of WALLET.", show_default=False),
]
Concurrency = Annotated[int, typer.Option("--concurrency", min=1, max=64, help="Pages (or wallets) fetched at once.")]

# --- transactions -------------------------------------------------------------------------------

Ix = Annotated[bool, typer.Option("--ix", help="Ask for raw instructions (/ix) and build the transaction locally.")]
Sign = Annotated[bool, typer.Option("--sign", help="Sign (after review) and print the signed transaction; do not send.")]
Send = Annotated[bool, typer.Option("--send", help="Sign, send, and wait for confirmation.")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before signing (required off a terminal).")]
NoWait = Annotated[bool, typer.Option("--no-wait", help="Print the signature right after sending.")]
NoSimulate = Annotated[bool, typer.Option("--no-simulate", help="Skip the simulation before signing.")]
Commitment = Annotated[str, typer.Option("--commitment", help="processed, confirmed or finalized.")]
ConfirmTimeout = Annotated[float, typer.Option("--timeout", help="Seconds to wait for confirmation.")]
Keypair = Annotated[
    Optional[str],
    typer.Option("--keypair", "-k", help="Keypair file, or - for stdin (default: YIELD_KEYPAIR, profile, Solana CLI config).", show_default=False),
]
RpcUrl = Annotated[
    Optional[str],
    typer.Option("--url", "-u", help="Solana RPC URL or moniker: mainnet-beta, devnet, testnet, localhost (m/d/t/l).", show_default=False),
]
