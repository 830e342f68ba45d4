"""Deposits, withdrawals and account closes from Python: prepared, reviewed, then signed or sent.

`Client.deposit(...)` returns a `PreparedTransaction`: the service's transaction with its review, the
intent check's verdict (`effect`) and the fee, nothing signed. `.sign(confirm=...)` and
`.send(confirm=...)` go through the same pipeline as `yield deposit --send` (`yieldcli.chain.transact`):
the guard, the `confirm` callback (none: nothing is signed), the journal of sent signatures, one send
rebroadcast as the same bytes, the wait, one typed outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from yieldcli.errors import UsageError

if TYPE_CHECKING:
    from solders.keypair import Keypair
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.sign import Signer

    from yieldcli.api.aio import AsyncServiceClient
    from yieldcli.api.sync import ServiceClient
    from yieldcli.chain.compute_budget import FeeSummary
    from yieldcli.chain.intent import Check
    from yieldcli.chain.journal import Journal
    from yieldcli.chain.review import Review
    from yieldcli.chain.transact import Hooks, Prepared, TransactOptions, UserRequest
    from yieldcli.chain.transact_outcomes import Outcome, Signed

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
            raise UsageError("no keypair: create the client with keypair= (a Keypair, a keypair file or a Ledger)",
                             kind="usage.no_keypair")
        return self.keypair

    def journal(self) -> Journal:
        from yieldcli.chain.journal import Journal

        return Journal(self.journal_path)


def chain_settings(api_url: str, rpc_url: str | None, keypair: Signer | Keypair | str | Path | None,
                   journal_path: str | Path | None, timeout: float) -> ChainSettings:
    """The same defaults as `yield`: the journal in its data folder, mainnet-beta unless the service is local."""
    from urllib.parse import urlsplit

    from yieldcli.config import data_dir
    from yieldcli.environment import Environment
    from yieldcli.urls import is_loopback

    if isinstance(keypair, (str, Path)):
        from yieldcli.chain.keypairs import load_signer

        # A keypair URL (`usb://ledger?key=0`) stays a string: a Path would fold its `//`.
        keypair = load_signer(keypair if isinstance(keypair, str) else str(keypair.expanduser())).signer
    path = Path(journal_path) if journal_path is not None else data_dir(Environment()) / "in-flight.json"
    expected = None if is_loopback(urlsplit(api_url).hostname) else "mainnet-beta"
    return ChainSettings(rpc_url or "", keypair, path, timeout, expected)


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

    def _completion(self, send: bool, confirm: Confirm | None, wait: bool = True,
                    again: bool = False) -> tuple[Prepared, Hooks]:
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

    def send(self, confirm: Confirm | None = None, *, wait: bool = True, again: bool = False,
             progress: Progress | None = None) -> Outcome:
        """Sign after `confirm` says yes, send once, wait: Confirmed, Failed, Expired, Pending (or Sent
        with wait=False). `again`: send although an earlier transaction for this wallet landed since.
        `progress(stage, commitment)` hears how the wait goes ("waiting", the commitment seen so far)."""
        return self._complete(*_heard(self._completion(True, confirm, wait, again), progress))

    def _complete(self, prepared: Prepared, hooks: Hooks) -> Outcome:
        from yieldcli.chain.transact import complete

        outcome: Outcome = _on_rpc(self._settings.rpc_url, self._settings.timeout, prepared.options.commitment,
                                   lambda rpc: complete(rpc, prepared, hooks, self._settings.journal()))
        return outcome


class AsyncPreparedTransaction(_Reviewed):
    """`PreparedTransaction` for asyncio: `await prepared.send(confirm=...)`."""

    async def sign(self, confirm: Confirm | None = None) -> Signed:
        from yieldcli.chain.transact_outcomes import Signed

        outcome = await self._complete(*self._completion(False, confirm))
        assert isinstance(outcome, Signed)
        return outcome

    async def send(self, confirm: Confirm | None = None, *, wait: bool = True, again: bool = False,
                   progress: Progress | None = None) -> Outcome:
        return await self._complete(*_heard(self._completion(True, confirm, wait, again), progress))

    async def _complete(self, prepared: Prepared, hooks: Hooks) -> Outcome:
        from yieldcli.chain.rpc import Rpc
        from yieldcli.chain.transact import complete

        async with Rpc(self._settings.rpc_url, timeout=self._settings.timeout, commitment=prepared.options.commitment) as rpc:
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


def amount_in_base_units(mint: str, amount: Decimal | str | int | None, raw: int | None, everything: bool,
                         decimals_of_unknown: Callable[[], int]) -> int | None:
    """Exact base units from token units (`Decimal("1.5")`) or `raw=` base units; None for everything."""
    from yieldcli import tokens
    from yieldcli.amounts import Amount

    given = [x for x in (amount, raw) if x is not None]
    if everything == bool(given) or len(given) > 1:
        raise UsageError("give one of amount=, raw= or all=True", kind="usage.amount")
    if everything:
        return None
    if raw is not None:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise UsageError("raw= takes an int of base units", kind="usage.amount")
        return Amount.from_raw(raw, 0, name="raw").raw
    if isinstance(amount, float):
        raise UsageError("amount= takes a Decimal or a string, never a float: a float is not exact", kind="usage.amount")
    known = tokens.by_mint(mint)
    decimals = known.decimals if known else decimals_of_unknown()
    # Decimal("1E+2") is 100: written out in full, so the exact rules for token units apply to it.
    text = format(amount, "f") if isinstance(amount, Decimal) and amount.is_finite() else str(amount)
    return Amount.parse(text, decimals, name="amount").raw


def decimals_of_mint(mint: str, rpc_url: str | None, timeout: float, balances: Callable[[], Any]) -> int:
    """`decimals_of_mint_async` for the blocking client: `balances()` is called, not awaited."""
    async def fetched() -> Any:
        return balances()

    result: int = _on_loop(lambda: decimals_of_mint_async(mint, rpc_url, timeout, fetched))
    return result


async def decimals_of_mint_async(mint: str, rpc_url: str | None, timeout: float,
                                 balances: Callable[[], Awaitable[Any]]) -> int:
    """A mint's decimals: a known token's; else read from its mint account on chain, as spl-token
    does (a chain fact the service does not control); the service's `balances()` answer only when
    no RPC is given or it cannot be reached."""
    from yieldcli import tokens
    from yieldcli.chain.rpc import Rpc
    from yieldcli.errors import NetworkError

    known = tokens.by_mint(mint)
    if known:
        return known.decimals
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
    return decimals_in_balances(await balances(), mint)


async def _decimals_on_chain(rpc: Any, mint: str) -> int | None:
    from solders.pubkey import Pubkey

    from yieldcli.solana import programs

    info = await rpc.account_info(Pubkey.from_string(mint))
    return programs.parse_mint_decimals(str(info.owner), bytes(info.data)) if info else None


def decimals_in_balances(body: Any, mint: str) -> int:
    """A mint's decimals from the service's balances answer for it."""
    items = body.get("data", []) if isinstance(body, dict) else []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("token_address") == mint and isinstance(item.get("decimals"), int):
            return int(item["decimals"])
    raise UsageError(f"unknown mint {mint}: its decimals are not known; give the amount in base units with raw=",
                     kind="usage.amount")


@dataclass(frozen=True)
class Order:
    """What to ask the service for, and what the answer must do."""

    request: UserRequest
    path: str
    params: dict[str, Any]


def _ready(settings: ChainSettings, order: Order, options: TransactOptions) -> tuple[Signer, str, TransactOptions]:
    keypair = settings.need_keypair()
    payer = order.request.expected_payer or str(keypair.pubkey())
    return keypair, payer, replace(options, sign=True, send=False, expected_cluster=settings.expected_cluster)


def prepare_write(api: ServiceClient, settings: ChainSettings, order: Order, *, ix: bool,
                  limits: Limits) -> PreparedTransaction:
    """Ask the service, review, simulate and check: a transaction that can then be signed or sent."""
    from yieldcli.chain.service_transactions import from_service
    from yieldcli.chain.transact import Hooks, Prepared, prepare

    keypair, payer, options = _ready(settings, order, limits.options())
    obtain = from_service(api.post, order.path, order.params, payer, ix=ix)
    prepared = _on_rpc(settings.rpc_url, settings.timeout, options.commitment, lambda rpc: prepare(rpc, settings.rpc_url, order.request, obtain, options,
                                                                Hooks(), lambda: [keypair]))
    assert isinstance(prepared, Prepared)  # an unsigned transaction cannot have landed already
    return PreparedTransaction(prepared, settings)


async def prepare_write_async(api: AsyncServiceClient, settings: ChainSettings, order: Order, *, ix: bool,
                              limits: Limits) -> AsyncPreparedTransaction:
    from yieldcli.chain.rpc import Rpc
    from yieldcli.chain.service_transactions import from_service
    from yieldcli.chain.transact import Hooks, Prepared, prepare

    keypair, payer, options = _ready(settings, order, limits.options())
    obtain = from_service(api.post, order.path, order.params, payer, ix=ix)
    async with Rpc(settings.rpc_url, timeout=settings.timeout, commitment=options.commitment) as rpc:
        prepared = await prepare(rpc, settings.rpc_url, order.request, obtain, options, Hooks(), lambda: [keypair])
    assert isinstance(prepared, Prepared)
    return AsyncPreparedTransaction(prepared, settings)


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
    commitment: str = "confirmed"
    timeout: float = 60.0  # seconds to wait for the commitment
    strategy_program: str | None = None  # the strategy's program off mainnet (as the strategy_program setting)

    def options(self) -> TransactOptions:
        from yieldcli.chain.compute_budget import parse_priority_fee
        from yieldcli.chain.transact import TransactOptions

        # "auto" or a whole number, as text or an int: the same rule as the command line's flag.
        price = None if self.priority_fee is None else parse_priority_fee(str(self.priority_fee))
        return TransactOptions(priority_fee=price, max_fee=self.max_fee, max_sol_cost=self.max_sol_cost,
                               commitment=self.commitment, timeout=self.timeout, strategy_program=self.strategy_program)


def move_order(settings: ChainSettings, action: str, strategy_id: str, asset: str, amount: Decimal | str | None,
               raw: int | None, everything: bool, decimals_of_unknown: Callable[[str, str], int], *,
               wallet: str | None, payer: str | None, token_account: str | None,
               extra: Mapping[str, Any]) -> Order:
    """A deposit or a withdrawal (`action`), as `yield deposit`/`withdraw` request it;
    `decimals_of_unknown(mint, wallet)` for a mint that is not a known token."""
    from yieldcli import tokens
    from yieldcli.chain.transact import UserRequest

    mint = tokens.resolve_asset(asset, "asset")
    wallet, payer = identity(settings, wallet, payer)
    base_units = amount_in_base_units(mint, amount, raw, everything, lambda: decimals_of_unknown(mint, wallet))
    params = {"strategy_id": strategy_id, "base_asset": mint, "user_key": wallet, "payer_key": payer,
              "user_token_account": token_account, **extra,
              **({"all": True} if base_units is None else {"amount": base_units})}
    request = UserRequest(action, payer, {wallet, payer}, wallet, strategy_id, mint, amount=base_units,
                          exclude_fees=bool(extra.get("exclude_fees")), unwrap=bool(extra.get("unwrap_wsol_ata")))
    return Order(request, f"/{action}", params)


def close_order(settings: ChainSettings, strategy_id: str, asset: str, *, wallet: str | None, payer: str | None,
                recipient: str | None, token_account: str | None) -> Order:
    """Close the wallet's fund account for a strategy and asset; its rent goes to `recipient` (the wallet)."""
    from yieldcli import tokens
    from yieldcli.chain.transact import UserRequest

    mint = tokens.resolve_asset(asset, "asset")
    wallet, payer = identity(settings, wallet, payer)
    params = {"user_pubkey": wallet, "strategy_id": strategy_id, "mint": mint, "payer": payer,
              "funds_recipient": recipient, "user_token_account": token_account}
    request = UserRequest("close-account", payer, {wallet, payer}, wallet, strategy_id, mint, funds_recipient=recipient)
    return Order(request, "/close-user-account", params)


def identity(settings: ChainSettings, wallet: str | None, payer: str | None) -> tuple[str, str]:
    """The wallet (default: the keypair's public key) and the fee payer (default: the wallet)."""
    from yieldcli.addresses import check_pubkey

    wallet = check_pubkey(wallet, "wallet") if wallet else str(settings.need_keypair().pubkey())
    return wallet, check_pubkey(payer, "payer") if payer else wallet
