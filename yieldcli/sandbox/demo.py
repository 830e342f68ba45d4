"""Deterministic demo data for the sandbox service: strategies, the demo and whale wallets, synthetic seeds.

Nothing here imports solders at module level: the wallet addresses are hard-coded constants (a unit
test checks them against the seeds), so the CLI can name them without paying for solders.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import TYPE_CHECKING, Any

from yieldcli.addresses import b58decode, b58encode
from yieldcli.tokens import KNOWN_TOKENS, NATIVE_SOL, WSOL_MINT, by_symbol

if TYPE_CHECKING:  # solders is imported only when a keypair is made
    from solders.keypair import Keypair

STATE_FORMAT = "yieldcli-sandbox-ledger"
STATE_VERSION = 1

DEMO_STRATEGY_ID = "sandbox-0000-4000-8000-000000000001"
DEMO_STRATEGY_NAME = "Sandbox Yield Strategy"
SECOND_STRATEGY_ID = "sandbox-0000-4000-8000-000000000002"
SECOND_STRATEGY_NAME = "Sandbox Conservative Strategy"

# Keypair.from_seed(DEMO_WALLET_SEED).pubkey(), kept as text so reading it costs no import.
DEMO_WALLET_SEED = b"yield-sandbox-demo-wallet-seed-1"
DEMO_WALLET = "5PJ1rhA862Qd39y7bTWTRvQN4bqSFnyV82EDgH4kVr9k"
WHALE_WALLET_SEED = b"yield-sandbox-whale-wallet-seed1"
WHALE_WALLET = "n8q5R11p29cdtveYLxAM9JqAJ9WbAHwYBKeHiWSdawR"

# Fixed instants keep the demo data byte-for-byte reproducible.
DEMO_ENTRY_DATE = "2025-01-06T09:30:00+00:00"
DEMO_LAST_UPDATED = "2025-06-02T12:00:00+00:00"

_USD = 10**6
_SOL = 10**9

# Wallet tokens the strategies do not support: /user-balances lists every token a wallet holds.
EXTRA_TOKENS: tuple[tuple[str, str, int, str], ...] = (
    ("BONK", "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263", 5, "Bonk"),
    ("JUP", "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN", 6, "Jupiter"),
    ("PYTH", "HZ1JovNiVvGrGNiiYvEozEVgZ58xaU3RKwX8eACQBCt3", 6, "Pyth Network"),
    ("WIF", "EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm", 6, "dogwifhat"),
    ("RAY", "4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R", 6, "Raydium"),
)

# Base assets on Token-2022 (the service lists some, PYUSD among them): a PYUSD-like mint at PYUSD's address,
# made by the sandbox on the Token-2022 program with the real one's extensions (a permanent delegate, a transfer
# hook with no program, a metadata pointer, a transfer fee at 0: `chain/setup.py`), its issuer the sandbox's.
TOKEN_2022_TOKENS: tuple[tuple[str, str, int, str], ...] = (
    ("PYUSD", "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo", 6, "PayPal USD"),
)
PYUSD_MINT = TOKEN_2022_TOKENS[0][1]

# Listed tokens `yield` does not ship with, as a token the service lists after a release is: known only by
# their own metadata on the sandbox chain (`chain/setup.py` writes it), a Token-2022 mint's metadata extension
# and an SPL Token mint's Metaplex account. Addresses: sha256("yield-sandbox-mint:" + symbol), made up.
# (symbol, mint, decimals, name, owning program: "token-2022" or "token")
METADATA_TOKENS: tuple[tuple[str, str, int, str, str], ...] = (
    ("SDX", "J3N4o2hND6ab5ToVqLK8sJUufUBgBcSZnc4Ra1Nfv5ep", 6, "Sandbox Dollar", "token-2022"),
    ("SBOND", "7qXBsLq8zgvJ7hQWjb5nu5cPBMZYi4DY9MPvYFbk9hco", 6, "Sandbox Bond", "token"),
)


def chain_tokens() -> list[tuple[str, str, int]]:
    """(symbol, mint, decimals) of every token mint the sandbox chain holds: what `sandbox airdrop` gives."""
    return [
        *((t.symbol, t.mint, t.decimals) for t in KNOWN_TOKENS),
        *((t[0], t[1], t[2]) for t in TOKEN_2022_TOKENS),
        *((t[0], t[1], t[2]) for t in METADATA_TOKENS),
    ]


_EXTRA_BALANCES = {
    "BONK": 184_500_000_000,
    "JUP": 412_337_000,
    "PYTH": 1_020_000_000,
    "WIF": 77_250_000,
    "RAY": 19_800_000,
}

# symbol -> (apy in percentage points, weight for the strategy's weighted apy: notional TVL in USD)
_DEMO_APY: dict[str, tuple[float, int]] = {
    "USDC": (8.42, 4_200_000),
    "USDT": (7.91, 2_100_000),
    "USDS": (6.35, 650_000),
    "SOL": (6.12, 3_300_000),
    "JitoSOL": (7.48, 1_900_000),
    "mSOL": (7.05, 800_000),
    "JupSOL": (7.67, 720_000),
    "JLP": (18.3, 1_150_000),
    "PYUSD": (8.0, 150_000),
}
_SECOND_APY: dict[str, tuple[float, int]] = {
    "USDC": (5.1, 9_800_000),
    "USDT": (4.87, 5_400_000),
    "USDS": (4.6, 1_200_000),
    "SOL": (5.24, 2_600_000),
    "JitoSOL": (6.02, 900_000),
    "JLP": (11.75, 300_000),
    "SDX": (5.5, 400_000),
    "SBOND": (4.2, 250_000),
}


def demo_keypair() -> Keypair:
    """The demo wallet's keypair (imports solders)."""
    from solders.keypair import Keypair

    return Keypair.from_seed(DEMO_WALLET_SEED)


def whale_keypair() -> Keypair:
    """The whale wallet's keypair (imports solders)."""
    from solders.keypair import Keypair

    return Keypair.from_seed(WHALE_WALLET_SEED)


def fund_id_for(strategy_id: str, mint: str) -> str:
    """Deterministic fund id (uuid text) of a strategy's fund for one base asset."""
    digest = hashlib.sha256(f"yieldcli-sandbox-fund:{strategy_id}:{mint}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def weighted_apy(apy_and_weight: dict[str, tuple[float, int]]) -> float:
    total = sum(w for _, w in apy_and_weight.values())
    return round(sum(a * w for a, w in apy_and_weight.values()) / total, 2)


def _strategy(strategy_id: str, name: str, apys: dict[str, tuple[float, int]]) -> dict[str, Any]:
    mints = {sym: _mint(sym) for sym in apys}
    return {
        "strategy_id": strategy_id,
        "strategy_name": name,
        "apy": weighted_apy(apys),
        "apy_per_asset": {mints[sym]: apy for sym, (apy, _) in apys.items()},
    }


def _mint(symbol: str) -> str:
    token = by_symbol(symbol)
    if token is None:
        listed = {t[0]: t[1] for t in TOKEN_2022_TOKENS} | {t[0]: t[1] for t in METADATA_TOKENS}
        return listed[symbol]
    return token.mint


def _position(deposited: int, value: int, entry_date: str = DEMO_ENTRY_DATE) -> dict[str, Any]:
    return {
        "deposited": deposited,
        "value": value,
        "entry_date": entry_date,
        "last_updated": DEMO_LAST_UPDATED,
    }


def initial_state() -> dict[str, Any]:
    """The ledger's state as first created (and after reset): JSON-ready, ints exact."""
    tokens: dict[str, dict[str, Any]] = {}
    for t in (*KNOWN_TOKENS, NATIVE_SOL):
        tokens[t.mint] = {"symbol": t.symbol, "name": t.name, "decimals": t.decimals}
    for symbol, mint, decimals, name in (*TOKEN_2022_TOKENS, *EXTRA_TOKENS, *(t[:4] for t in METADATA_TOKENS)):
        tokens[mint] = {"symbol": symbol, "name": name, "decimals": decimals}

    strategies = {
        DEMO_STRATEGY_ID: _strategy(DEMO_STRATEGY_ID, DEMO_STRATEGY_NAME, _DEMO_APY),
        SECOND_STRATEGY_ID: _strategy(SECOND_STRATEGY_ID, SECOND_STRATEGY_NAME, _SECOND_APY),
    }
    funds: dict[str, dict[str, Any]] = {}
    for sid, strategy in strategies.items():
        for mint, apy in strategy["apy_per_asset"].items():
            fid = fund_id_for(sid, mint)
            symbol = tokens[mint]["symbol"]
            funds[fid] = {
                "fund_id": fid,
                "fund_name": f"{strategy['strategy_name']} {symbol}",
                "strategy_id": sid,
                "mint": mint,
                "apy": apy,
            }

    def positions(sid: str, entries: dict[str, tuple[int, int, str]]) -> dict[str, Any]:
        return {fund_id_for(sid, _mint(sym)): _position(dep, val, date) for sym, (dep, val, date) in entries.items()}

    demo_positions = positions(
        DEMO_STRATEGY_ID,
        {
            "USDC": (2_500 * _USD, 2_547_318_402, "2025-01-06T09:30:00+00:00"),
            "USDT": (1_200 * _USD, 1_218_904_117, "2025-01-20T14:05:12+00:00"),
            "USDS": (400 * _USD, 404_812_555, "2025-02-11T08:45:00+00:00"),
            "SOL": (15 * _SOL, 15_276_400_125, "2025-02-03T17:22:41+00:00"),
            "JitoSOL": (8 * _SOL, 8_183_992_001, "2025-03-01T10:00:00+00:00"),
            "mSOL": (3_500_000_000, 3_541_117_380, "2025-03-18T21:13:07+00:00"),
            "JupSOL": (2 * _SOL, 2_019_846_663, "2025-04-09T06:55:30+00:00"),
        },
    )
    demo_positions.update(
        positions(
            SECOND_STRATEGY_ID,
            {
                "USDC": (750 * _USD, 759_210_004, "2025-02-14T12:00:00+00:00"),
                "USDT": (300 * _USD, 302_877_190, "2025-02-28T16:40:00+00:00"),
                "USDS": (150 * _USD, 150_964_211, "2025-03-05T09:10:00+00:00"),
                "SOL": (4 * _SOL, 4_041_337_902, "2025-03-22T11:11:11+00:00"),
                "JitoSOL": (1_250_000_000, 1_262_004_518, "2025-04-15T19:30:00+00:00"),
                "JLP": (520 * _USD, 561_448_090, "2025-05-01T07:00:00+00:00"),
            },
        )
    )
    demo_tokens = {
        NATIVE_SOL.mint: 25_000_000_000,
        _mint("USDC"): 1_250_750_000,
        _mint("USDT"): 310_000_000,
        _mint("USDS"): 0,
        _mint("JitoSOL"): 1_730_000_000,
        _mint("mSOL"): 640_500_000,
        _mint("JLP"): 88_120_000,
        PYUSD_MINT: 500 * _USD,
    }
    for symbol, mint, _decimals, _name in EXTRA_TOKENS:
        demo_tokens[mint] = _EXTRA_BALANCES[symbol]

    # Amounts above 2**64 (u128) check that every layer keeps integers exact.
    big = 2**64
    whale_positions = positions(
        DEMO_STRATEGY_ID,
        {
            "USDC": (3 * big + 123_456_789, 3 * big + 987_654_321_012, DEMO_ENTRY_DATE),
            "SOL": (5 * big, 5 * big + 18_446_744_073_709_551_617, "2025-02-01T00:00:00+00:00"),
            "JLP": (big + 1, big + 1 + 2**40, "2025-03-01T00:00:00+00:00"),
        },
    )
    whale_tokens = {
        NATIVE_SOL.mint: 2**70 + 5,
        _mint("USDC"): 2**100 + 7,
        _mint("SOL"): big + 42,
    }

    return {
        "format": STATE_FORMAT,
        "version": STATE_VERSION,
        "tokens": tokens,
        "strategies": strategies,
        "funds": funds,
        "wallets": {
            DEMO_WALLET: {"tokens": demo_tokens, "positions": demo_positions},
            WHALE_WALLET: {"tokens": whale_tokens, "positions": whale_positions},
        },
    }


# ---- synthetic seeds for benchmarks ------------------------------------------------------------
# Items are computed from their index on demand, so N=100000 costs nothing until it is read.

_SYNTH_MINT_PREFIX = hashlib.sha256(b"yieldcli-sandbox-synthetic-mint").digest()[:24]
SYNTH_DECIMALS = 6


def synthetic_mint(i: int) -> str:
    return b58encode(_SYNTH_MINT_PREFIX + i.to_bytes(8, "big"))


def synthetic_index(mint: str) -> int | None:
    """Inverse of synthetic_mint, or None for any other text."""
    try:
        raw = b58decode(mint)
    except ValueError:
        return None
    if len(raw) != 32 or raw[:24] != _SYNTH_MINT_PREFIX:
        return None
    return int.from_bytes(raw[24:], "big")


def synthetic_fund_id(i: int) -> str:
    return f"00000000-5eed-4000-8000-{i:012d}"


def synthetic_fund_index(fund_id: str) -> int | None:
    prefix = "00000000-5eed-4000-8000-"
    if not fund_id.startswith(prefix):
        return None
    tail = fund_id[len(prefix) :]
    return int(tail) if len(tail) == 12 and tail.isdigit() else None


def synthetic_deposited(i: int) -> int:
    return _USD * (1 + (i * 7919) % 5000)


def synthetic_value(i: int) -> int:
    deposited = synthetic_deposited(i)
    return deposited + deposited * (i % 97) // 1000


def synthetic_wallet_tokens(i: int) -> int:
    return (i * 104_729) % 10**9


def synthetic_apy(i: int) -> float:
    return round(3 + (i * 37 % 900) / 100, 2)


def synthetic_date(i: int) -> str:
    return f"2025-03-{1 + i % 28:02d}T00:00:00+00:00"


def seeded_wallet_address(j: int) -> str:
    return b58encode(hashlib.sha256(b"yieldcli-sandbox-wallet:%d" % j).digest())


def seeded_wallet_addresses(n: int) -> list[str]:
    """The addresses of the `n` extra wallets a sandbox started with seed_wallets=n serves."""
    return [seeded_wallet_address(j) for j in range(n)]


def seeded_wallet_data(j: int) -> dict[str, Any]:
    """Tokens and positions of seeded wallet `j`, in the ledger's wallet shape."""
    usdc, sol = _mint("USDC"), WSOL_MINT
    usdc_dep = _USD * (50 + (j * 131) % 5000)
    sol_dep = 10**8 * (1 + (j * 17) % 300)
    return {
        "tokens": {
            NATIVE_SOL.mint: 10**8 * (5 + j % 200),
            usdc: _USD * ((j * 53) % 2000),
            _mint("JitoSOL"): 10**7 * (j % 50),
        },
        "positions": {
            fund_id_for(DEMO_STRATEGY_ID, usdc): _position(
                usdc_dep, usdc_dep + usdc_dep * (j % 41) // 1000, synthetic_date(j)
            ),
            fund_id_for(DEMO_STRATEGY_ID, sol): _position(
                sol_dep, sol_dep + sol_dep * (j % 29) // 1000, synthetic_date(j + 7)
            ),
        },
    }
