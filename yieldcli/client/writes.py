"""A write as every face asks for it, and the one place it becomes an order.

`Write` is what is asked: an action's row (`yieldcli.client.actions`) and its arguments, in token units
or base units. `Handed` is a transaction built elsewhere and what its sender says it does.
`WriteOptions` is the one carrier of a write's settings: how it is built (/ix, a durable nonce), its
limits (fees, cost, commitment, wait) and how far one call goes (sign, send, wait). `order_of` turns an
ask into the service's order (`orders.order_for`): the wallet and payer, the mint, exact base units.
`Hooks` is what a caller says and sees on the way (the command line's review drawing, question and
signals); the pipeline that drives all of it is `yieldcli.chain.transact.engine`, reached through the
client (`driver.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from yieldcli import tokens
from yieldcli.addresses import check_pubkey
from yieldcli.chain.keys.keypairs import nonce_authority
from yieldcli.chain.transact.types import Hooks as Hooks
from yieldcli.chain.transact.types import Prepared as Prepared
from yieldcli.chain.transact.types import TransactOptions
from yieldcli.chain.transact.types import UserRequest as UserRequest
from yieldcli.client import orders
from yieldcli.client.actions import TRANSACTION, Action, action_named
from yieldcli.errors import NetworkError, UsageError
from yieldcli.solana.cluster import DEFAULT_COMMITMENT, DEFAULT_CONFIRM_TIMEOUT
from yieldcli.tokens import WSOL_MINT

if TYPE_CHECKING:
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.types import Obtain
    from yieldcli.client.orders import Order
    from yieldcli.client.prepared import ChainSettings


@dataclass(frozen=True)
class WriteOptions:
    """Every setting of a write, one value: how it is built, its limits, how far one call goes.

    A library caller gives the first two groups as keywords of `Client.deposit` & co. (and signs or
    sends later); the command line's flags fill all three."""

    # How it is built: from the service's /ix instructions, on a durable nonce (whose authority is the
    # keypair unless `nonce_authority` names another: a Signer or keypair file signs now, a public key later).
    ix: bool = False
    nonce: str | None = None
    nonce_authority: Signer | str | Path | None = None
    # Its limits.
    priority_fee: int | str | None = None  # micro-lamports per compute unit, or "auto"
    max_fee: int | None = None  # lamports of base plus priority fee
    max_sol_cost: int | None = None  # lamports of fee and rent the transaction may take from the wallet
    commitment: str = DEFAULT_COMMITMENT
    timeout: float = DEFAULT_CONFIRM_TIMEOUT  # seconds to wait for the commitment
    strategy_program: str | None = None  # the strategy's program off mainnet (as the strategy_program setting)
    # How far one call goes.
    sign: bool = False
    send: bool = False
    wait: bool = True
    simulate: bool = True
    again: bool = False  # send although an earlier transaction for this wallet landed since
    unsafe_allow_mismatch: bool = False

    def __post_init__(self) -> None:
        if self.nonce_authority is not None and self.nonce is None:
            raise UsageError("nonce_authority= needs nonce=", kind="usage.nonce.authority_alone")
        if self.nonce is not None:
            object.__setattr__(self, "nonce", check_pubkey(self.nonce, "nonce"))
            object.__setattr__(self, "ix", True)  # a durable nonce is built into a transaction compiled here

    def authority(self) -> tuple[str, Signer | None]:
        """The nonce's authority: a Keypair, a keypair file or a Ledger URL signs now; a public key signs later."""
        value = self.nonce_authority
        assert value is not None
        if isinstance(value, (str, Path)):
            # A keypair URL (`usb://ledger?key=0`) stays a string: a Path would fold its `//`.
            found = nonce_authority(value if isinstance(value, str) else str(value.expanduser()))
            return found.pubkey, found.keypair
        return str(value.pubkey()), value

    def transact_options(self, settings: ChainSettings, *, given: bool) -> TransactOptions:
        """The pipeline's options: these (a write's own priority fee insists, even on a transaction
        already signed), then the settings' defaults (a profile's fee, which such a transaction does
        not take); a transaction built elsewhere (`given`) is on the cluster its blockhash is known on."""
        from yieldcli.chain.fees.compute_budget import parse_priority_fee

        own = self.priority_fee is not None
        # "auto" or a whole number, as text or an int: the same rule as the command line's flag.
        price = parse_priority_fee(str(self.priority_fee)) if own else settings.priority_fee
        return TransactOptions(
            sign=self.sign,
            send=self.send,
            wait=self.wait,
            simulate=self.simulate,
            commitment=self.commitment,
            timeout=self.timeout,
            again=self.again,
            unsafe_allow_mismatch=self.unsafe_allow_mismatch,
            max_sol_cost=self.max_sol_cost,
            priority_fee=price,
            priority_fee_insists=own,
            priority_fee_source="request" if own else settings.priority_fee_source,
            max_fee=self.max_fee if self.max_fee is not None else settings.max_fee,
            expected_cluster=None if given else settings.expected_cluster,
            strategy_program=self.strategy_program or settings.strategy_program,
            trust_file=str(settings.trust_file) if settings.trust_file is not None else None,
        )


# The keywords a library caller may give of `WriteOptions`: how far to go is `.sign()`/`.send()`'s.
LIBRARY_OPTIONS = frozenset(f.name for f in fields(WriteOptions)) - {
    "sign",
    "send",
    "wait",
    "simulate",
    "again",
    "unsafe_allow_mismatch",
}


class LimitArgs(TypedDict, total=False):
    """The keyword arguments of every write, as `WriteOptions` takes them."""

    priority_fee: int | str | None
    max_fee: int | None
    max_sol_cost: int | None
    commitment: str
    timeout: float
    strategy_program: str | None


class WriteArgs(LimitArgs, total=False):
    """The keyword arguments every action of a client takes besides its asset."""

    strategy: str | None
    wallet: str | None
    payer: str | None
    token_account: str | None
    ix: bool
    nonce: str | None
    nonce_authority: Signer | str | Path | None


class MoveArgs(WriteArgs, total=False):
    """A deposit's: besides an amount in token units, `raw` base units or `all`."""

    raw: int | None
    all: bool


class WithdrawArgs(MoveArgs, total=False):
    exclude_fees: bool
    create_wsol_ata: bool | None
    unwrap_wsol: bool | None
    detect_wsol: bool


class CloseArgs(WriteArgs, total=False):
    recipient: str | None
    account: str | None


@dataclass(frozen=True)
class Write:
    """What is asked: `action`'s row and its arguments as a face gives them. `amount` in token units
    (exact: a Decimal or text), or `raw` base units, or `everything`; `position`: the fund account by its
    address, for an action that may name it so; `options`: the row's own, by keyword."""

    action: Action
    asset: str | None
    strategy_id: str | None
    amount: Decimal | str | None = None
    raw: int | None = None
    everything: bool = False
    wallet: str | None = None
    payer: str | None = None
    token_account: str | None = None
    position: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    amount_name: str = "amount"  # what the amount is called in errors (the command line's `--amount`)
    named_as: str | None = None  # the symbol `asset` (now its mint) was given as, when a listed token's


@dataclass(frozen=True)
class Handed:
    """A transaction built elsewhere (base64 text, bytes or a VersionedTransaction) and what its sender
    says it does: `action` of `mint` (`amount` base units, None: everything), or "transaction" (only
    the fee); `payer` and `wallet` are signers named, `nonce` the durable nonce it may be built on."""

    transaction: str | bytes | VersionedTransaction
    action: str = TRANSACTION
    mint: str | None = None
    amount: int | None = None
    payer: str | None = None
    wallet: str | None = None
    nonce: str | None = None
    strategy_id: str | None = None
    decimals: int | None = None  # what a stated amount was converted from token units with (None: base units)

    def request(self) -> tuple[UserRequest, Obtain]:
        from yieldcli.chain.transact.obtain import given
        from yieldcli.chain.tx.decode import decode_transaction

        tx = decode_transaction(self.transaction) if isinstance(self.transaction, (str, bytes)) else self.transaction
        stated = orders.stated_request(
            self.action,
            mint=self.mint,
            amount=self.amount,
            payer=check_pubkey(self.payer, "payer") if self.payer else None,
            wallet=check_pubkey(self.wallet, "wallet") if self.wallet else None,
            nonce=check_pubkey(self.nonce, "nonce") if self.nonce else None,
            strategy_id=self.strategy_id,
        )
        return replace(stated, decimals=self.decimals), given(tx)


def handed(
    transaction: str | bytes | VersionedTransaction,
    action: str,
    asset: str | None,
    amount: Decimal | str | None,
    raw: int | None,
    everything: bool,
    **named: str | None,
) -> Handed:
    """`Client.prepare_transaction`'s arguments as a `Handed`: an amount in token units needs a known token."""
    signers = (named.get("payer"), named.get("wallet"), named.get("nonce"))
    if action == TRANSACTION:
        return Handed(transaction, TRANSACTION, None, None, *signers)
    row = action_named(action)
    mint = tokens.resolve_asset(asset, "asset") if asset is not None else None
    units = None
    if row.amount and mint is not None:
        units = orders.base_units(mint, amount, raw, everything, lambda: None)
    places = orders.known_decimals(mint) if mint is not None and amount is not None else None
    return Handed(transaction, row.name, mint, units, *signers, named.get("strategy_id"), places)


async def order_of(settings: ChainSettings, ask: Write) -> Order:
    """The service's order for `ask`: the wallet (default: the keypair's) and the payer (default: the
    wallet), the mint, and exact base units; an unknown mint's decimals from its mint account on chain,
    never from the service."""
    row = ask.action
    wallet = check_pubkey(ask.wallet, "wallet") if ask.wallet else str(settings.need_keypair().pubkey())
    payer = check_pubkey(ask.payer, "payer") if ask.payer else wallet
    token_account = check_pubkey(ask.token_account, "token_account") if ask.token_account else None
    position = check_pubkey(ask.position, "account") if ask.position else None
    if ask.asset is None and position is None:
        raise UsageError(f"{row.name} needs its asset", kind="usage.asset.missing")
    mint = tokens.resolve_asset(ask.asset, "asset") if ask.asset is not None else None
    meaningless = [o.keyword for o in row.options if o.sol_only and ask.options.get(o.keyword) and mint != WSOL_MINT]
    if meaningless and mint is not None:
        raise UsageError(f"{', '.join(meaningless)}: for SOL only, not {_named(mint)}", kind="usage.option.sol_only")
    units = converted_with = None
    if row.amount:
        assert mint is not None
        decimals = None
        if ask.amount is not None and orders.known_decimals(mint) is None:
            decimals = await decimals_of_mint(mint, settings.rpc_url, settings.timeout)
        if ask.amount is not None:
            converted_with = orders.known_decimals(mint) if decimals is None else decimals
        try:
            units = orders.base_units(mint, ask.amount, ask.raw, ask.everything, lambda: decimals, name=ask.amount_name)
        except UsageError as exc:
            if exc.kind == "usage.amount.decimals" and ask.amount_name == "amount":  # the command line names --raw
                exc.hint = "give the amount in base units with raw="
            raise
    order = orders.order_for(
        row,
        wallet=wallet,
        payer=payer,
        strategy_id=None if position is not None else ask.strategy_id,
        mint=None if position is not None else mint,
        amount=units,
        position=position,
        token_account=token_account,
        options=ask.options,
    )
    # The guard holds the mint, as its own read finds it, to the decimals the amount was converted with.
    return replace(order, request=replace(order.request, decimals=converted_with, named_as=ask.named_as))


def _named(mint: str) -> str:
    known = tokens.by_mint(mint)
    return known.symbol if known else mint


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


def write_from_keywords(
    action: Action, asset: str | None, amount: Decimal | str | None, args: dict[str, Any], strategy_id: str | None
) -> tuple[Write, WriteOptions]:
    """A client's keyword arguments as a `Write` and its `WriteOptions`; a keyword no write takes is
    refused as Python refuses one."""
    rest = dict(args)
    raw, everything = rest.pop("raw", None), rest.pop("all", False)
    if not action.amount and (amount is not None or raw is not None or everything):
        raise TypeError(f"{action.method}() takes no amount, raw= or all=")
    own = {o.keyword: rest.pop(o.keyword) for o in action.options if o.keyword in rest}
    position = rest.pop("account", None) if action.by_position else None
    named = {k: rest.pop(k, None) for k in ("wallet", "payer", "token_account")}
    unknown = sorted(set(rest) - LIBRARY_OPTIONS)
    if unknown:
        raise TypeError(f"{action.method}() got an unexpected keyword argument {unknown[0]!r}")
    ask = Write(action, asset, strategy_id, amount, raw, everything, position=position, options=own, **named)
    return ask, replace(WriteOptions(), **rest)
