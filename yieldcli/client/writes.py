"""Deposits, withdrawals and account closes from Python: the order from a client's arguments, then asked
of the service, reviewed, simulated and checked into a `PreparedTransaction` (`yieldcli.client.prepared`)
that is then signed or sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from yieldcli import tokens
from yieldcli.addresses import check_pubkey
from yieldcli.chain.keys.keypairs import nonce_authority
from yieldcli.chain.transact.engine import Hooks, Prepared, TransactOptions, prepare
from yieldcli.client import orders

# Published here first: `X as X` keeps them importable from this module for type checkers too.
from yieldcli.client.prepared import AsyncPreparedTransaction as AsyncPreparedTransaction
from yieldcli.client.prepared import ChainSettings as ChainSettings
from yieldcli.client.prepared import PreparedTransaction as PreparedTransaction
from yieldcli.client.prepared import on_loop, on_rpc
from yieldcli.errors import NetworkError, UsageError
from yieldcli.solana.cluster import DEFAULT_COMMITMENT, DEFAULT_CONFIRM_TIMEOUT

if TYPE_CHECKING:
    from solders.transaction import VersionedTransaction

    from yieldcli.api.aio import AsyncServiceClient
    from yieldcli.api.sync import ServiceClient
    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.engine import Obtain, TransactOptions, UserRequest
    from yieldcli.chain.tx.nonce import OnNonce
    from yieldcli.client.orders import Order


def _ready(
    settings: ChainSettings,
    order: Order,
    limits: Limits,
    nonce: str | None,
    nonce_authority: Signer | str | Path | None,
) -> tuple[Order, list[Signer], TransactOptions, OnNonce | None]:
    """The order with the nonce's authority named, who signs (the keypair first), the options, the nonce."""
    from yieldcli.chain.tx.nonce import OnNonce

    signers = [settings.need_keypair()]
    on_nonce = None
    if nonce_authority is not None and nonce is None:
        raise UsageError("nonce_authority= needs nonce=", kind="usage.nonce.authority_alone")
    if nonce is not None:
        named = None
        if nonce_authority is not None:
            named, keypair = _authority(nonce_authority)
            signers += [keypair] if keypair is not None else []
            order = order.signed_also_by(named)
        on_nonce = OnNonce(check_pubkey(nonce, "nonce"), named)
    options = replace(
        settings.applied(limits.options()), sign=True, send=False, expected_cluster=settings.expected_cluster
    )
    return order, signers, options, on_nonce


def _authority(value: Signer | str | Path) -> tuple[str, Signer | None]:
    """A nonce's authority: a Keypair, a keypair file or a Ledger URL signs now; a public key signs later."""
    if isinstance(value, (str, Path)):
        # A keypair URL (`usb://ledger?key=0`) stays a string: a Path would fold its `//`.
        found = nonce_authority(value if isinstance(value, str) else str(value.expanduser()))
        return found.pubkey, found.keypair
    return str(value.pubkey()), value


def decimals_of_mint(
    mint: str, rpc_url: str | None, timeout: float, from_service: Callable[[], int | None]
) -> int | None:
    """`decimals_of_mint_async` for the blocking client and the command line: `from_service()` is called,
    not awaited."""

    async def fetched() -> int | None:
        return from_service()

    result: int | None = on_loop(lambda: decimals_of_mint_async(mint, rpc_url, timeout, fetched))
    return result


async def decimals_of_mint_async(
    mint: str, rpc_url: str | None, timeout: float, from_service: Callable[[], Awaitable[int | None]]
) -> int | None:
    """A mint's decimals: a known token's; else read from its mint account on chain, as spl-token
    does (a chain fact the service does not control); the service's word (`from_service()`, None:
    unknown) only when no RPC is given or it cannot be reached."""
    from yieldcli.chain.rpc.adapter import Rpc

    known = orders.known_decimals(mint)
    if known is not None:
        return known
    if rpc_url:
        try:
            async with Rpc(rpc_url, timeout=timeout) as rpc:
                places = await _decimals_on_chain(rpc, mint)
        except NetworkError:
            places = -1  # no answer: the service's word below, as without an RPC
        if places is None:
            raise UsageError(f"{mint} is not a token mint on the RPC {rpc_url}", kind="usage.asset.not_a_mint")
        if places >= 0:
            return places
    return await from_service()


async def _decimals_on_chain(rpc: Any, mint: str) -> int | None:
    from solders.pubkey import Pubkey

    from yieldcli.solana import programs

    info = await rpc.account_info(Pubkey.from_string(mint))
    return programs.parse_mint_decimals(str(info.owner), bytes(info.data)) if info else None


def prepare_write(
    api: ServiceClient,
    settings: ChainSettings,
    order: Order,
    *,
    ix: bool,
    limits: Limits,
    nonce: str | None = None,
    nonce_authority: Signer | str | Path | None = None,
) -> PreparedTransaction:
    """Ask the service, review, simulate and check: a transaction that can then be signed or sent."""
    order, signers, options, on_nonce = _ready(settings, order, limits, nonce, nonce_authority)
    obtain = order.obtain(api.post, ix=ix or on_nonce is not None, nonce=on_nonce)
    prepared = on_rpc(
        settings.rpc_url,
        settings.timeout,
        options.commitment,
        lambda rpc: prepare(rpc, settings.rpc_url, order.request, obtain, options, Hooks(), lambda: signers),
    )
    assert isinstance(prepared, Prepared)  # an unsigned transaction cannot have landed already
    return PreparedTransaction(prepared, settings)


async def prepare_write_async(
    api: AsyncServiceClient,
    settings: ChainSettings,
    order: Order,
    *,
    ix: bool,
    limits: Limits,
    nonce: str | None = None,
    nonce_authority: Signer | str | Path | None = None,
) -> AsyncPreparedTransaction:
    from yieldcli.chain.rpc.adapter import Rpc

    order, signers, options, on_nonce = _ready(settings, order, limits, nonce, nonce_authority)
    obtain = order.obtain(api.post, ix=ix or on_nonce is not None, nonce=on_nonce)
    async with Rpc(settings.rpc_url, timeout=settings.timeout, commitment=options.commitment) as rpc:
        prepared = await prepare(rpc, settings.rpc_url, order.request, obtain, options, Hooks(), lambda: signers)
    assert isinstance(prepared, Prepared)
    return AsyncPreparedTransaction(prepared, settings)


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


def prepare_given(settings: ChainSettings, request: UserRequest, obtain: Obtain, limits: Limits) -> PreparedTransaction:
    """Review, simulate and check a transaction built elsewhere against `request`, as `yield tx sign`
    does: its cluster is the one its blockhash is known on, whatever service the client names (it
    may have been built against the sandbox, or by anyone)."""
    signers = [settings.need_keypair()]
    options = replace(settings.applied(limits.options()), sign=True, send=False, expected_cluster=None)
    prepared = on_rpc(
        settings.rpc_url,
        settings.timeout,
        options.commitment,
        lambda rpc: prepare(rpc, settings.rpc_url, request, obtain, options, Hooks(), lambda: signers),
    )
    assert isinstance(prepared, Prepared)  # without a journal, prepare never looks for an earlier landing
    return PreparedTransaction(prepared, settings)


class LimitArgs(TypedDict, total=False):
    """The keyword arguments of every write, as `Limits` takes them."""

    priority_fee: int | str | None
    max_fee: int | None
    max_sol_cost: int | None
    commitment: str
    timeout: float
    strategy_program: str | None


@dataclass(frozen=True)
class Limits:
    """The fee and wait settings every write takes."""

    priority_fee: int | str | None = None  # micro-lamports per compute unit, or "auto"
    max_fee: int | None = None  # lamports of base plus priority fee
    max_sol_cost: int | None = None  # lamports of fee and rent the transaction may take from the wallet
    commitment: str = DEFAULT_COMMITMENT
    timeout: float = DEFAULT_CONFIRM_TIMEOUT  # seconds to wait for the commitment
    strategy_program: str | None = None  # the strategy's program off mainnet (as the strategy_program setting)

    def options(self) -> TransactOptions:
        from yieldcli.chain.fees.compute_budget import parse_priority_fee

        # "auto" or a whole number, as text or an int: the same rule as the command line's flag.
        price = None if self.priority_fee is None else parse_priority_fee(str(self.priority_fee))
        return TransactOptions(
            priority_fee=price,
            max_fee=self.max_fee,
            max_sol_cost=self.max_sol_cost,
            commitment=self.commitment,
            timeout=self.timeout,
            strategy_program=self.strategy_program,
        )


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
    exclude_fees: bool = False,
    unwrap_wsol: bool | None = None,
) -> Order:
    """A deposit or a withdrawal (`action`) from the keyword arguments of `Client.deposit`/`withdraw`;
    `decimals_of_unknown(mint, wallet)` for a mint that is not a known token."""
    mint = tokens.resolve_asset(asset, "asset")
    wallet, payer = identity(settings, wallet, payer)
    try:
        units = orders.base_units(mint, amount, raw, everything, lambda: decimals_of_unknown(mint, wallet))
    except UsageError as exc:
        if exc.kind == "usage.amount.decimals":
            exc.hint = "give the amount in base units with raw="
        raise
    if action == "deposit":
        return orders.deposit_order(
            strategy_id=strategy_id, mint=mint, wallet=wallet, payer=payer, amount=units, token_account=token_account
        )
    return orders.withdraw_order(
        strategy_id=strategy_id,
        mint=mint,
        wallet=wallet,
        payer=payer,
        amount=units,
        token_account=token_account,
        exclude_fees=exclude_fees,
        unwrap_wsol=unwrap_wsol,
    )


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
