"""Deposits, withdrawals and account closes from Python: the order from a client's arguments, then asked
of the service, reviewed, simulated and checked into a `PreparedTransaction` (`yieldcli.client.prepared`)
that is then signed or sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yieldcli import tokens
from yieldcli.addresses import check_pubkey
from yieldcli.chain.guard import actions
from yieldcli.chain.keys.keypairs import nonce_authority
from yieldcli.client import orders

# Published here first: `X as X` keeps them importable from this module for type checkers too.
from yieldcli.client.prepared import AsyncPreparedTransaction as AsyncPreparedTransaction
from yieldcli.client.prepared import ChainSettings as ChainSettings
from yieldcli.client.prepared import CloseArgs as CloseArgs
from yieldcli.client.prepared import LimitArgs as LimitArgs
from yieldcli.client.prepared import Limits as Limits
from yieldcli.client.prepared import Mode as Mode
from yieldcli.client.prepared import MoveArgs as MoveArgs
from yieldcli.client.prepared import PreparedTransaction as PreparedTransaction
from yieldcli.client.prepared import WithdrawArgs as WithdrawArgs
from yieldcli.errors import NetworkError, UsageError

if TYPE_CHECKING:
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.engine import Obtain, UserRequest
    from yieldcli.client.orders import Order


@dataclass(frozen=True)
class Write:
    """How a write is built and how far it goes: from /ix instructions, on a durable nonce (whose
    authority is the keypair unless `nonce_authority` names another), and `mode`."""

    ix: bool = False
    nonce: str | None = None
    nonce_authority: Signer | str | Path | None = None
    mode: Mode = Mode()

    def __post_init__(self) -> None:
        if self.nonce_authority is not None and self.nonce is None:
            raise UsageError("nonce_authority= needs nonce=", kind="usage.nonce.authority_alone")
        if self.nonce is not None:
            object.__setattr__(self, "nonce", check_pubkey(self.nonce, "nonce"))

    def authority(self) -> tuple[str, Signer | None]:
        """The nonce's authority: a Keypair, a keypair file or a Ledger URL signs now; a public key signs later."""
        value = self.nonce_authority
        assert value is not None
        if isinstance(value, (str, Path)):
            # A keypair URL (`usb://ledger?key=0`) stays a string: a Path would fold its `//`.
            found = nonce_authority(value if isinstance(value, str) else str(value.expanduser()))
            return found.pubkey, found.keypair
        return str(value.pubkey()), value


async def decimals_of_mint(mint: str, rpc_url: str | None, timeout: float) -> int | None:
    """A mint's decimals: a known token's; else read from its mint account on chain, as spl-token
    does. Never the service's word: an amount in token units becomes base units with them, and the
    service must not decide how much that is. None: no RPC answered (only base units can be meant)."""
    from yieldcli.chain.rpc.adapter import Rpc

    known = orders.known_decimals(mint)
    if known is not None or not rpc_url:
        return known
    try:
        async with Rpc(rpc_url, timeout=timeout) as rpc:
            places = await _decimals_on_chain(rpc, mint)
    except NetworkError:
        return None
    if places is None:
        raise UsageError(f"{mint} is not a token mint on the RPC {rpc_url}", kind="usage.asset.not_a_mint")
    return places


async def _decimals_on_chain(rpc: Any, mint: str) -> int | None:
    from solders.pubkey import Pubkey

    from yieldcli.solana import programs

    info = await rpc.account_info(Pubkey.from_string(mint))
    return programs.parse_mint_decimals(str(info.owner), bytes(info.data)) if info else None


def given_order(
    settings: ChainSettings,
    transaction: str | bytes | VersionedTransaction,
    action: str,
    asset: str | None,
    amount: Decimal | str | None,
    raw: int | None,
    everything: bool,
    *,
    payer: str | None,
    wallet: str | None,
    nonce: str | None = None,
    strategy: str | None = None,
) -> tuple[UserRequest, Obtain]:
    """A transaction built elsewhere and what its sender says it does (`action` of `asset`), as the
    pipeline takes them; an amount in token units needs a known token's decimals."""
    from yieldcli.chain.transact.obtain import given
    from yieldcli.chain.tx.decode import decode_transaction

    tx = decode_transaction(transaction) if isinstance(transaction, (str, bytes)) else transaction
    mint = tokens.resolve_asset(asset, "asset") if asset is not None else None
    units = None
    if action in ("deposit", "withdraw") and mint is not None:
        units = orders.base_units(mint, amount, raw, everything, lambda: None)
    request = orders.stated_request(
        action,
        mint=mint,
        amount=units,
        payer=check_pubkey(payer, "payer") if payer else None,
        wallet=check_pubkey(wallet, "wallet") if wallet else None,
        nonce=check_pubkey(nonce, "nonce") if nonce else None,
        strategy_id=strategy,
    )
    return request, given(tx)


@dataclass(frozen=True)
class Move:
    """A deposit or a withdrawal (`action`) as a client's arguments give it; `flags`: the withdrawal's own."""

    action: str
    asset: str
    amount: Decimal | str | None
    raw: int | None
    everything: bool
    strategy_id: str
    wallet: str | None
    payer: str | None
    token_account: str | None
    flags: dict[str, Any] = field(default_factory=dict)
    name: str = "amount"  # what the amount is called in errors (the command line's `--amount`)


def move_order(
    settings: ChainSettings,
    action: str,
    strategy_id: str,
    asset: str,
    amount: Decimal | str | None,
    raw: int | None,
    everything: bool,
    decimals_of_unknown: Callable[[str, str], int | None],
    *,
    wallet: str | None,
    payer: str | None,
    token_account: str | None,
    name: str = "amount",
    **flags: Any,
) -> Order:
    """A deposit or a withdrawal (`action`) from the keyword arguments of `Client.deposit`/`withdraw`;
    `decimals_of_unknown(mint, wallet)` for a mint that is not a known token."""
    mint = tokens.resolve_asset(asset, "asset")
    wallet, payer = identity(settings, wallet, payer)
    try:
        units = orders.base_units(mint, amount, raw, everything, lambda: decimals_of_unknown(mint, wallet), name=name)
    except UsageError as exc:
        if exc.kind == "usage.amount.decimals" and name == "amount":  # the command line's hint names --raw
            exc.hint = "give the amount in base units with raw="
        raise
    made: dict[str, Any] = {
        "strategy_id": strategy_id,
        "mint": mint,
        "wallet": wallet,
        "payer": payer,
        "token_account": token_account,
    }
    if actions.action(action).kind == "deposit":
        return orders.deposit_order(**made, amount=units, action=action)
    return orders.withdraw_order(**made, amount=units, action=action, **flags)


def close_order(
    settings: ChainSettings,
    strategy_id: str,
    asset: str,
    *,
    wallet: str | None,
    payer: str | None,
    recipient: str | None,
    token_account: str | None,
) -> Order:
    """Close the wallet's fund account for a strategy and asset; its rent goes to `recipient` (the wallet)."""
    mint = tokens.resolve_asset(asset, "asset")
    wallet, payer = identity(settings, wallet, payer)
    return orders.close_order(
        wallet=wallet, payer=payer, strategy_id=strategy_id, mint=mint, recipient=recipient, token_account=token_account
    )


def identity(settings: ChainSettings, wallet: str | None, payer: str | None) -> tuple[str, str]:
    """The wallet (default: the keypair's public key) and the fee payer (default: the wallet)."""
    wallet = check_pubkey(wallet, "wallet") if wallet else str(settings.need_keypair().pubkey())
    return wallet, check_pubkey(payer, "payer") if payer else wallet
