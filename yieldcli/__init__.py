"""yield: a command-line tool for a Solana yield-strategy service."""

__version__ = "0.1.0"
