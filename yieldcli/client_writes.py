"""Deposits, withdrawals and account closes from Python: prepared, reviewed, then signed or sent.

`Client.deposit(...)` returns a `PreparedTransaction`: the service's transaction with its review, the
intent check's verdict (`effect`) and the fee, nothing signed. `.sign(confirm=...)` and
`.send(confirm=...)` go through the same pipeline as `yield deposit --send` (`yieldcli.chain.transact`):
the refusals before signing, the `confirm` callback (none: nothing is signed), the journal of sent signatures, one send
rebroadcast as the same bytes, the wait, one typed outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from yieldcli.errors import UsageError
from yieldcli.solana.cluster import DEFAULT_COMMITMENT, DEFAULT_CONFIRM_TIMEOUT

if TYPE_CHECKING:
    from solders.keypair import Keypair
    from solders.transaction import VersionedTransaction

    from yieldcli.api.aio import AsyncServiceClient
    from yieldcli.api.sync import ServiceClient
    from yieldcli.chain.compute_budget import FeeSummary
    from yieldcli.chain.intent import Check
    from yieldcli.chain.journal import Journal
    from yieldcli.chain.nonce import OnNonce
    from yieldcli.chain.review import Review
    from yieldcli.chain.sign import Signer
    from yieldcli.chain.transact import Hooks, Obtain, Prepared, TransactOptions, UserRequest
    from yieldcli.chain.transact_outcomes import Outcome, Signed
    from yieldcli.orders import Order

Confirm = Callable[[str, "Prepared"], bool]
Progress = Callable[[str, "str | None"], None]
T = TypeVar("T")


@dataclass(frozen=True)
class ChainSettings:
    """Where and as whom transactions are signed and sent."""

    rpc_url: str
    keypair: Signer | None  # a solders Keypair, or a key on a Ledger
    journal_path: Path
    timeout: float
    expected_cluster: str | None  # "mainnet-beta" for the public service; None for the sandbox

    def need_keypair(self) -> Signer:
        if self.keypair is None:
            raise UsageError(
                "no keypair: create the client with keypair= (a Keypair, a keypair file or a Ledger)",
                kind="usage.no_keypair",
            )
        return self.keypair

    def journal(self) -> Journal:
        from yieldcli.chain.journal import Journal

        return Journal(self.journal_path)


def chain_settings(
    api_url: str,
    rpc_url: str | None,
    keypair: Signer | Keypair | str | Path | None,
    journal_path: str | Path | None,
    timeout: float,
) -> ChainSettings:
    """The same defaults as `yield`: the journal in its data folder, mainnet-beta unless the service is local."""
    from yieldcli import orders
    from yieldcli.environment import Environment

    if isinstance(keypair, (str, Path)):
        from yieldcli.chain.keypairs import load_signer

        # A keypair URL (`usb://ledger?key=0`) stays a string: a Path would fold its `//`.
        keypair = load_signer(keypair if isinstance(keypair, str) else str(keypair.expanduser())).signer
    path = Path(journal_path) if journal_path is not None else orders.journal_path(Environment())
    return ChainSettings(rpc_url or "", keypair, path, timeout, orders.expected_cluster(api_url))


class _Reviewed:
    """What a prepared transaction shows before anything is signed."""

    def __init__(self, prepared: Prepared, settings: ChainSettings):
        self._prepared = prepared
        self._settings = settings

    @property
    def review(self) -> Review:
        """The decoded transaction: payer, signers, instructions and their accounts."""
        return self._prepared.review

    @property
    def effect(self) -> Check | None:
        """The intent check: `.ok`, `.summary` (one line), `.differences`; None when it could not run."""
        return self._prepared.effect

    @property
    def fee(self) -> FeeSummary | None:
        return self._prepared.fees

    @property
    def transaction(self) -> VersionedTransaction:
        return self._prepared.transaction

    @property
    def result(self) -> dict[str, Any]:
        """Everything as `yield ... -o json` shows it (review, fee, simulation, effect)."""
        return self._prepared.result

    @property
    def message_hash(self) -> str | None:
        """With a Ledger: the hash it shows when it blind-signs (base58 of the message's SHA-256), to compare."""
        value = self._prepared.result.get("message_hash")
        return str(value) if value is not None else None

    def _completion(
        self, send: bool, confirm: Confirm | None, wait: bool = True, again: bool = False
    ) -> tuple[Prepared, Hooks]:
        """A fresh copy to complete (a prepared transaction can be signed, then sent), and its hooks."""
        from yieldcli.chain.transact import Hooks

        options = replace(self._prepared.options, sign=not send, send=send, wait=wait, again=again)
        return replace(self._prepared, options=options, result=dict(self._prepared.result)), Hooks(confirm=confirm)


class PreparedTransaction(_Reviewed):
    """A transaction the service built for a request, reviewed and checked; nothing is signed yet."""

    def sign(self, confirm: Confirm | None = None) -> Signed:
        """Sign our slots after `confirm(prompt, prepared)` says yes; not sent."""
        from yieldcli.chain.transact_outcomes import Signed

        outcome = self._complete(*self._completion(False, confirm))
        assert isinstance(outcome, Signed)
        return outcome

    def send(
        self,
        confirm: Confirm | None = None,
        *,
        wait: bool = True,
        again: bool = False,
        progress: Progress | None = None,
    ) -> Outcome:
        """Sign after `confirm` says yes, send once, wait: Confirmed, Failed, Expired, Pending (or Sent
        with wait=False). `again`: send although an earlier transaction for this wallet landed since.
        `progress(stage, commitment)` hears how the wait goes ("waiting", the commitment seen so far)."""
        return self._complete(*_heard(self._completion(True, confirm, wait, again), progress))

    def _complete(self, prepared: Prepared, hooks: Hooks) -> Outcome:
        from yieldcli.chain.transact import complete

        outcome: Outcome = _on_rpc(
            self._settings.rpc_url,
            self._settings.timeout,
            prepared.options.commitment,
            lambda rpc: complete(rpc, prepared, hooks, self._settings.journal()),
        )
        return outcome


class AsyncPreparedTransaction(_Reviewed):
    """`PreparedTransaction` for asyncio: `await prepared.send(confirm=...)`."""

    async def sign(self, confirm: Confirm | None = None) -> Signed:
        from yieldcli.chain.transact_outcomes import Signed

        outcome = await self._complete(*self._completion(False, confirm))
        assert isinstance(outcome, Signed)
        return outcome

    async def send(
        self,
        confirm: Confirm | None = None,
        *,
        wait: bool = True,
        again: bool = False,
        progress: Progress | None = None,
    ) -> Outcome:
        return await self._complete(*_heard(self._completion(True, confirm, wait, again), progress))

    async def _complete(self, prepared: Prepared, hooks: Hooks) -> Outcome:
        from yieldcli.chain.rpc import Rpc
        from yieldcli.chain.transact import complete

        async with Rpc(
            self._settings.rpc_url, timeout=self._settings.timeout, commitment=prepared.options.commitment
        ) as rpc:
            return await complete(rpc, prepared, hooks, self._settings.journal())


def _heard(completion: tuple[Prepared, Hooks], progress: Progress | None) -> tuple[Prepared, Hooks]:
    """`completion` with its hooks telling `progress` how the wait goes."""
    prepared, hooks = completion
    return (prepared, hooks) if progress is None else (prepared, replace(hooks, progress=progress))


def _on_rpc(rpc_url: str, timeout: float, commitment: str, step: Callable[[Any], Any]) -> Any:
    """One pipeline step on its own event loop and RPC connection (a blocking client has no loop of its own)."""
    from yieldcli.chain.rpc import Rpc

    async def run() -> Any:
        async with Rpc(rpc_url, timeout=timeout, commitment=commitment) as rpc:
            return await step(rpc)

    return _on_loop(run)


def _on_loop(run: Callable[[], Awaitable[Any]]) -> Any:
    """`run()` to completion on an event loop of its own (a blocking client has none)."""

    async def main() -> Any:
        return await run()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    # Called from a running event loop (a notebook, an async application): on a thread of its own.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, main()).result()


def _ready(
    settings: ChainSettings,
    order: Order,
    limits: Limits,
    nonce: str | None,
    nonce_authority: Signer | str | Path | None,
) -> tuple[Order, list[Signer], TransactOptions, OnNonce | None]:
    """The order with the nonce's authority named, who signs (the keypair first), the options, the nonce."""
    from yieldcli.addresses import check_pubkey
    from yieldcli.chain.nonce import OnNonce

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
    options = replace(limits.options(), sign=True, send=False, expected_cluster=settings.expected_cluster)
    return order, signers, options, on_nonce


def _authority(value: Signer | str | Path) -> tuple[str, Signer | None]:
    """A nonce's authority: a Keypair, a keypair file or a Ledger URL signs now; a public key signs later."""
    from yieldcli.chain.nonce import nonce_authority

    if isinstance(value, (str, Path)):
        # A keypair URL (`usb://ledger?key=0`) stays a string: a Path would fold its `//`.
        found = nonce_authority(value if isinstance(value, str) else str(value.expanduser()))
        return found.pubkey, found.keypair
    return str(value.pubkey()), value


def decimals_of_mint(
    mint: str, rpc_url: str | None, timeout: float, from_service: Callable[[], int | None]
) -> int | None:
    """`decimals_of_mint_async` for the blocking client and the command line: `from_service()` is called, not awaited."""

    async def fetched() -> int | None:
        return from_service()

    result: int | None = _on_loop(lambda: decimals_of_mint_async(mint, rpc_url, timeout, fetched))
    return result


async def decimals_of_mint_async(
    mint: str, rpc_url: str | None, timeout: float, from_service: Callable[[], Awaitable[int | None]]
) -> int | None:
    """A mint's decimals: a known token's; else read from its mint account on chain, as spl-token
    does (a chain fact the service does not control); the service's word (`from_service()`, None:
    unknown) only when no RPC is given or it cannot be reached."""
    from yieldcli import orders
    from yieldcli.chain.rpc import Rpc
    from yieldcli.errors import NetworkError

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
    from yieldcli.chain.transact import Hooks, Prepared, prepare

    order, signers, options, on_nonce = _ready(settings, order, limits, nonce, nonce_authority)
    obtain = order.obtain(api.post, ix=ix or on_nonce is not None, nonce=on_nonce)
    prepared = _on_rpc(
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
    from yieldcli.chain.rpc import Rpc
    from yieldcli.chain.transact import Hooks, Prepared, prepare

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
) -> tuple[UserRequest, Obtain]:
    """A transaction built elsewhere and what its sender says it does (`action` of `asset`), as the
    pipeline takes them; an amount in token units needs a known token's decimals."""
    from yieldcli import orders, tokens
    from yieldcli.addresses import check_pubkey
    from yieldcli.chain.decode import decode_transaction
    from yieldcli.chain.service_transactions import given

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
    )
    return request, given(tx)


def prepare_given(settings: ChainSettings, request: UserRequest, obtain: Obtain, limits: Limits) -> PreparedTransaction:
    """Review, simulate and check a transaction built elsewhere against `request`, as `yield tx sign`
    does: its cluster is the one its blockhash is known on, whatever service the client names (it
    may have been built against the sandbox, or by anyone)."""
    from yieldcli.chain.transact import Hooks, Prepared, prepare

    signers = [settings.need_keypair()]
    options = replace(limits.options(), sign=True, send=False, expected_cluster=None)
    prepared = _on_rpc(
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
        from yieldcli.chain.compute_budget import parse_priority_fee
        from yieldcli.chain.transact import TransactOptions

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
    from yieldcli import orders, tokens

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
    from yieldcli import orders, tokens

    mint = tokens.resolve_asset(asset, "asset")
    wallet, payer = identity(settings, wallet, payer)
    return orders.close_order(
        wallet=wallet, payer=payer, strategy_id=strategy_id, mint=mint, recipient=recipient, token_account=token_account
    )


def identity(settings: ChainSettings, wallet: str | None, payer: str | None) -> tuple[str, str]:
    """The wallet (default: the keypair's public key) and the fee payer (default: the wallet)."""
    from yieldcli.addresses import check_pubkey

    wallet = check_pubkey(wallet, "wallet") if wallet else str(settings.need_keypair().pubkey())
    return wallet, check_pubkey(payer, "payer") if payer else wallet
