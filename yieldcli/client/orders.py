"""The one order builder: a deposit, withdrawal or account close as the service is asked for it, and
what the transaction it answers with must do.

Every front door builds its orders here (`yield deposit`, `Client.deposit`, the agent server): the
amount in base units, the mint's decimals, the service's request body, and the request the intent
check verifies, read from that body (never a second, hand-written copy of it). The chain settings a
write needs are here too: where the journal of sent signatures lives and which cluster the service
builds for.

    order = order_for(DEPOSIT, strategy_id=..., mint=mint, wallet=wallet, payer=wallet, amount=base_units)
    obtain = order.obtain(service.post, ix=False)          # for yieldcli.chain.transact.engine
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from yieldcli import tokens
from yieldcli.amounts import Amount
from yieldcli.chain.transact.types import UserRequest
from yieldcli.client.actions import TRANSACTION, Action, action_named
from yieldcli.config import config_dir, data_dir
from yieldcli.errors import UsageError
from yieldcli.solana.cluster import SERVICE_CLUSTER
from yieldcli.urls import is_loopback

if TYPE_CHECKING:
    from yieldcli.chain.transact.obtain import Post
    from yieldcli.chain.transact.types import Obtain
    from yieldcli.chain.tx.nonce import OnNonce
    from yieldcli.environment import Environment

JOURNAL_FILE = "in-flight.json"  # in the data folder: the signatures sent and not yet settled


@dataclass(frozen=True)
class Order:
    """What to ask the service for (`path`, `params`) and what its transaction must do (`request`)."""

    action: Action
    params: dict[str, Any]  # the service's request body
    request: UserRequest  # read from `params` by `_request_of`
    signers: tuple[str, ...] = field(default=())  # named besides the wallet and the payer (a nonce authority)

    @property
    def path(self) -> str:
        return self.action.service_path

    @property
    def payer(self) -> str:
        return str(self.request.expected_payer)

    def signed_also_by(self, pubkey: str) -> Order:
        """The same order with one more signer named (who signs here or later)."""
        return _made(self.action, self.params, self.request.wallet, (*self.signers, pubkey))

    def obtain(self, post: Post, *, ix: bool, nonce: OnNonce | None = None) -> Obtain:
        """How the pipeline gets the service's transaction for this order (`post(path, body)`)."""
        from yieldcli.chain.transact.obtain import from_service

        return from_service(post, self.path, self.params, self.payer, ix=ix, nonce=nonce)


def _made(action: Action, params: dict[str, Any], wallet: str | None, signers: tuple[str, ...] = ()) -> Order:
    return Order(action, params, _request_of(action, params, wallet, signers), signers)


def _request_of(action: Action, params: Mapping[str, Any], wallet: str | None, signers: tuple[str, ...]) -> UserRequest:
    """What the transaction must do, read from the body the service is asked with."""
    fields = action.field

    def given(name: str) -> Any:
        return params.get(fields[name]) if name in fields else None

    wallet = given("wallet") or wallet  # a close by account address names no wallet in its body
    payer = given("payer")
    return UserRequest(
        action.name,
        payer,
        {k for k in (wallet, payer, *signers) if k},
        wallet,
        params.get("strategy_id"),
        given("mint"),
        amount=given("amount"),
        exclude_fees=bool(given("exclude_fees")),
        unwrap=bool(given("unwrap")),
        funds_recipient=given("funds_recipient"),
        token_account=params.get("user_token_account"),
        position=given("position"),
        checked_as=action.kind,
        noun=action.noun,
    )


def order_for(
    action: Action,
    *,
    wallet: str,
    payer: str,
    strategy_id: str | None = None,
    mint: str | None = None,
    amount: int | None = None,
    position: str | None = None,
    token_account: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> Order:
    """The one order builder: `action`'s body for the service, from its row's fields. `amount` in base
    units (None: everything); `position`: the fund account by its address, for an action that may name
    it so (then no wallet, strategy or mint goes in the body); `options`: the row's own, by keyword
    (None: the service's default)."""
    field_of = action.field
    given = dict(options or {})
    unknown = set(given) - {o.keyword for o in action.options}
    if unknown:
        raise UsageError(f"{action.name} takes no {', '.join(sorted(unknown))}", kind="usage.action.option")
    if position is not None and not action.by_position:
        raise UsageError(f"{action.name} cannot name its fund account by address", kind="usage.action.option")
    if position is not None:
        where: dict[str, Any] = {field_of["position"]: position}
    else:
        where = {"strategy_id": strategy_id, field_of["mint"]: mint, field_of["wallet"]: wallet}
    params: dict[str, Any] = {**where, field_of["payer"]: payer, "user_token_account": token_account}
    for option in action.options:
        value = given.get(option.keyword)
        # A flag that is off stays out of the body: the service's default, as a switch left unsaid.
        params[option.field] = (value or None) if option.form == "flag" else value
    if action.amount:
        params.update({"all": True} if amount is None else {field_of["amount"]: amount})
    return _made(action, params, wallet)


# --- amounts ---------------------------------------------------------------------------------------


def base_units(
    mint: str,
    amount: Decimal | str | int | None,
    raw: int | None,
    everything: bool,
    decimals: Callable[[], int | None],
    *,
    name: str = "amount",
) -> int | None:
    """Exact base units from token units (`Decimal("1.5")`, "1.5") or `raw` base units; None for
    everything. `decimals()` is asked only for token units of a mint that is not a known token;
    `name` is what the amount is called in errors."""
    given = [x for x in (amount, raw) if x is not None]
    if everything == bool(given) or len(given) > 1:
        raise UsageError("give one of amount=, raw= or all=True", kind="usage.amount")
    if everything:
        return None
    if raw is not None:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise UsageError("raw= takes an int of base units", kind="usage.amount")
        return Amount.from_raw(raw, 0, name=name).raw
    if isinstance(amount, float):
        raise UsageError(
            "amount= takes a Decimal or a string, never a float: a float is not exact", kind="usage.amount"
        )
    places = known_decimals(mint)
    places = places if places is not None else decimals()
    if places is None:
        raise UsageError(
            f"unknown mint {mint}: its decimals are not known, so the amount cannot be converted",
            kind="usage.amount.decimals",
        )
    # Decimal("1E+2") is 100: written out in full, so the exact rules for token units apply to it.
    text = format(amount, "f") if isinstance(amount, Decimal) and amount.is_finite() else str(amount)
    return Amount.parse(text, places, name=name).raw


def known_decimals(mint: str) -> int | None:
    """A built-in token's decimals; any other mint's are read from its account at each write (a learned
    token's too: what one read of the chain said is not what this write's check reads)."""
    known = tokens.built_in(mint)
    return known.decimals if known else None


# --- the chain settings of a write -----------------------------------------------------------------


def journal_path(env: Environment) -> Path:
    """Where the signatures sent and not yet settled are kept: one journal for every front door."""
    return data_dir(env) / JOURNAL_FILE


def journal_mirror_path(env: Environment) -> Path:
    """The journal's second copy, in the config folder (where agents do not reach: agents.md), one per
    data folder (named by its path, as configured): runs with data folders of their own share none."""
    key = hashlib.sha256(str(journal_path(env)).encode()).hexdigest()[:16]
    return config_dir(env) / "journals" / f"{key}.json"


def expected_cluster(api_url: str | None) -> str | None:
    """The cluster the service at `api_url` builds for: mainnet-beta, except a local service (the
    sandbox's cluster is its own: None, and the RPC must still know the transaction's blockhash)."""
    if is_loopback(urlsplit(api_url or "").hostname):
        return None
    return SERVICE_CLUSTER


# --- a transaction built elsewhere, and what its sender says it does -----------------------------


def built_here(name: str, *, payer: str, signers: set[str]) -> UserRequest:
    """What a transaction built here, not by the service, must do (`name`: how it is called, a nonce
    account's creation): paid by `payer`, signed by `signers` too; the guard checks it as one that
    costs only the fee, and its caller proves what more it may do."""
    return UserRequest(name, payer, {payer, *signers}, payer, trust=False)


def stated_request(
    action: str = TRANSACTION,
    *,
    mint: str | None = None,
    amount: int | None = None,
    payer: str | None = None,
    wallet: str | None = None,
    nonce: str | None = None,
    strategy_id: str | None = None,
) -> UserRequest:
    """What a transaction built elsewhere must do, as stated by who hands it over: an action of the
    rows (`amount` base units, None: everything) of `mint`, or "transaction" (any: signing may then
    cost only the network fee). `payer` and `wallet` are signers named; `nonce`, the durable nonce it
    may be built on."""
    named = {k for k in (payer, wallet) if k}
    if action == TRANSACTION:
        return UserRequest(TRANSACTION, payer, named, wallet, nonce=nonce, trust=False)
    row = action_named(action)
    if mint is None:
        raise UsageError(f"a stated {action} names its asset", kind="usage.expect")
    return UserRequest(
        row.name,
        payer,
        named,
        wallet,
        strategy_id,
        mint=mint,
        amount=amount if row.amount else None,
        nonce=nonce,
        trust=False,
        checked_as=row.kind,
        noun=row.noun,
    )
