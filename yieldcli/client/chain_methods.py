"""The chain's own methods of `Client` and `AsyncClient`: what became of a transaction, by its signature
(`transaction_status`), a durable-nonce account created (`create_nonce_account`), and the tokens the
strategy lists known by their on-chain metadata (`learn_tokens`). Written once
(`_Chain`), each a coroutine the blocking client runs on a loop of its own and the asyncio client
awaits, as the writes are. They need the client's `rpc_url` (and, to create, its `keypair`), never
the service. The creation takes the one path every write takes (`yieldcli.chain.transact.engine`):
the simulation and the checks, the question before signing (`confirm`), the journal of sent
signatures, one send rebroadcast as the same bytes, the wait, one outcome.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from yieldcli.errors import Refused, UsageError

if TYPE_CHECKING:
    from solders.keypair import Keypair
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.keys.sign import Signer
    from yieldcli.chain.transact.journal import InFlight
    from yieldcli.chain.transact.outcomes import Confirmed
    from yieldcli.chain.transact.settle import TransactionStatus
    from yieldcli.chain.transact.types import Hooks, Prepared
    from yieldcli.chain.tx.nonce import NonceAccount
    from yieldcli.client.prepared import ChainSettings
    from yieldcli.client.shared import WriteSettings
    from yieldcli.tokens import Token

S = TypeVar("S")  # what `transaction_status` returns: a TransactionStatus, or an awaitable of one
N = TypeVar("N")  # what `create_nonce_account` returns: a NonceCreated, or an awaitable of one
L = TypeVar("L")  # what `learn_tokens` returns: a list of Token, or an awaitable of one
T = TypeVar("T")
Confirm = Callable[[str, "Prepared"], "bool | Awaitable[bool]"]
Progress = Callable[[str, "str | None"], None]
Say = Callable[[str], None]

# The journal's and the checks' name for it: "your earlier create-nonce-account ... landed".
NONCE_ACTION = "create-nonce-account"


def check_signature(text: str) -> str:
    """`text` if it is a transaction signature (base58 of 64 bytes); a usage error otherwise."""
    from solders.signature import Signature

    try:
        Signature.from_string(text)
    except ValueError:
        raise UsageError(f"invalid signature {text!r}: expected base58 text of 64 bytes") from None
    return text


class NonceCreated:
    """A durable-nonce account created and read back; `outcome` is its transaction's. (A plain class:
    `from yieldcli import Client` loads this module, and a dataclass or a named tuple costs it time.)"""

    __slots__ = ("account", "keypair", "outcome")

    def __init__(self, account: NonceAccount, keypair: Keypair, outcome: Confirmed):
        self.account = account  # address, authority, nonce, lamports
        self.keypair = keypair  # the new account's; using the nonce needs only its authority
        self.outcome = outcome  # signature, slot, and the whole record in `result` (review, fee, sends)

    def __repr__(self) -> str:
        return f"NonceCreated(address={self.account.address}, signature={self.outcome.signature})"

    @property
    def signature(self) -> str:
        return self.outcome.signature

    def to_dict(self) -> dict[str, Any]:
        """The account as `yield nonce show` gives it, and the transaction that made it."""
        return {
            **self.account.to_dict(),
            "signature": self.outcome.signature,
            "slot": self.outcome.slot,
            "sends": self.outcome.result.get("sends", 1),
        }


class _Chain(Generic[S, N, L]):
    """The chain methods of both clients; `_drive(coroutine)` is the one thing each does its own way."""

    _api: Any
    _writes: WriteSettings

    def transaction_status(self, signature: str) -> S:
        """What became of the transaction `signature` (`TransactionStatus`: processed, confirmed,
        finalized, failed, expired, pending or unknown), from the RPC and the journal of signatures
        sent from here: one sent from here and not seen is pending until its blockhash passes (or its
        durable nonce moves on), then expired. A settled signature leaves the journal."""
        check_signature(signature)
        settings = self._writes.settings(self._api.base_url)
        return cast("S", self._drive(lambda: _status(settings, signature)))

    def forget_transaction(self, signature: str) -> InFlight | None:
        """Drop the journal's record of `signature` without proof of its fate, and return what it said,
        or None when there was none (a file of this machine: no await on either client). Only for a
        transaction on a chain that is gone (a local validator reset) or whose fate was checked
        elsewhere: a record dropped so no longer holds back the next send for its wallet."""
        check_signature(signature)
        journal = self._writes.settings(self._api.base_url).journal()
        entry = journal.find(signature)
        if entry is not None:
            journal.remove(signature)
        return entry

    def learn_tokens(self, mints: Iterable[str]) -> L:
        """The tokens of `mints` that are not built in, as their own on-chain metadata names them
        (Token-2022's metadata extension, or Metaplex's account), read now on this client's RPC;
        each is shown by that symbol from then on (reviews, the command line's tables). Typically
        `client.learn_tokens(client.strategy().assets)`. `asset="SDX"` in a write reads them by
        itself. A symbol that reads as a built-in token's (`U5DC`), or as another of these mints',
        is left out. Written down for shell completion only, never read back."""
        mints = list(mints)
        return cast("L", self._drive(lambda: _learn(lambda: self._writes.settings(self._api.base_url), mints)))

    def create_nonce_account(
        self,
        authority: str,
        *,
        account: Keypair | None = None,
        confirm: Confirm | None = None,
        commitment: str | None = None,
        timeout: float | None = None,
        progress: Progress | None = None,
        on_sent: Say | None = None,
        warn: Say | None = None,
        log: Say | None = None,
    ) -> N:
        """Create a durable-nonce account whose nonce only `authority` (a public key) can advance, paid
        by the client's keypair, as `solana create-nonce-account` does: an 80-byte System account
        funded with the rent-exempt minimum. `account`: its keypair (default: a new one). Built here,
        simulated and checked, then `confirm(question, prepared)` is asked (none: nothing is signed),
        signed, sent once and waited for (`commitment`, default confirmed; `timeout` seconds, default
        as the writes'): `NonceCreated`, or the outcome's error (failed, expired, pending) raised.
        `on_sent(signature)` as soon as it is sent,
        `progress(stage, commitment seen)` while it is awaited; `warn` and `log` hear the pipeline's
        warnings and details (default: the `yieldcli` logger)."""
        from yieldcli.addresses import check_pubkey
        from yieldcli.solana.cluster import DEFAULT_COMMITMENT, DEFAULT_CONFIRM_TIMEOUT

        check_pubkey(authority, "authority")
        commitment = DEFAULT_COMMITMENT if commitment is None else commitment
        timeout = DEFAULT_CONFIRM_TIMEOUT if timeout is None else timeout
        settings = self._writes.settings(self._api.base_url)
        payer = settings.need_keypair()
        if account is None:
            from solders.keypair import Keypair

            account = Keypair()
        new = account
        calls = _Calls(confirm, progress, on_sent, warn, log)
        return cast("N", self._drive(lambda: _create(settings, payer, authority, new, commitment, timeout, calls)))

    def _drive(self, run: Callable[[], Awaitable[T]]) -> Any:
        raise NotImplementedError


class ClientChain(_Chain["TransactionStatus", "NonceCreated", "list[Token]"]):
    """`Client`'s chain methods, blocking."""

    def _drive(self, run: Callable[[], Awaitable[T]]) -> T:
        from yieldcli.client.prepared import on_loop

        result: T = on_loop(run)
        return result


class AsyncClientChain(_Chain["Awaitable[TransactionStatus]", "Awaitable[NonceCreated]", "Awaitable[list[Token]]"]):
    """`AsyncClient`'s chain methods, awaited."""

    def _drive(self, run: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        return run()


async def _status(settings: ChainSettings, signature: str) -> TransactionStatus:
    from yieldcli.chain.rpc.adapter import Rpc
    from yieldcli.chain.transact.settle import transaction_status

    async with Rpc(settings.rpc_url, timeout=settings.timeout) as rpc:
        return await transaction_status(rpc, settings.rpc_url, settings.journal(), signature)


async def _learn(settings_of: Callable[[], ChainSettings], mints: list[str]) -> list[Token]:
    from yieldcli import tokens
    from yieldcli.chain.rpc.adapter import Rpc
    from yieldcli.chain.token_names import learn_tokens

    if all(tokens.built_in(mint) for mint in mints):
        return []  # nothing to ask: no RPC needed
    settings = settings_of()
    async with Rpc(settings.rpc_url, timeout=settings.timeout) as rpc:
        return await learn_tokens(rpc, mints)


class _Calls:
    """What the caller of `create_nonce_account` hears and answers."""

    __slots__ = ("confirm", "log", "on_sent", "progress", "warn")

    def __init__(
        self, confirm: Confirm | None, progress: Progress | None, on_sent: Say | None, warn: Say | None, log: Say | None
    ):
        self.confirm, self.progress, self.on_sent, self.warn, self.log = confirm, progress, on_sent, warn, log


async def _create(
    settings: ChainSettings,
    payer: Signer,
    authority: str,
    account: Keypair,
    commitment: str,
    timeout: float,
    calls: _Calls,
) -> NonceCreated:
    from solders.pubkey import Pubkey

    from yieldcli.chain.rpc.adapter import Rpc
    from yieldcli.chain.transact.engine import (
        Prepared,
        TransactionToReview,
        TransactOptions,
        complete,
        prepare,
    )
    from yieldcli.chain.transact.outcomes import Confirmed
    from yieldcli.chain.tx.instructions import build_transaction
    from yieldcli.chain.tx.nonce import NONCE_ACCOUNT_LENGTH, create_nonce_instructions, fetch_nonce
    from yieldcli.client.orders import built_here

    address, wallet = account.pubkey(), payer.pubkey()
    journal = settings.journal()
    async with Rpc(settings.rpc_url, timeout=settings.timeout, commitment=commitment) as rpc:
        lamports = await rpc.minimum_balance_for_rent_exemption(NONCE_ACCOUNT_LENGTH)
        instructions = create_nonce_instructions(wallet, address, Pubkey.from_string(authority), lamports)
        built: list[VersionedTransaction] = []

        async def obtain(rpc: Any) -> TransactionToReview:
            latest = await rpc.latest_blockhash()
            built.append(build_transaction(instructions, wallet, latest.blockhash))
            return TransactionToReview(built[-1], latest.last_valid_block_height)

        request = built_here(NONCE_ACTION, payer=str(wallet), signers={str(address)})
        # No action row says what creating a nonce account does (it pays rent into a new account), so
        # the guard's check (fees only) lists that as differences; they are accepted only after
        # `_check_creation` proved the message is exactly the one built here and its simulated effect
        # exactly that creation's (see its docstring). No other action is checked this way.
        options = TransactOptions(send=True, commitment=commitment, timeout=timeout, unsafe_allow_mismatch=True)
        question = _question(settings.rpc_url, address, authority, lamports, wallet)
        steps: list[Callable[[], None]] = []  # the journal's record of the send, dropped once told

        def check(prepared: Prepared) -> None:
            _check_creation(prepared, built[-1], lamports, str(address))

        hooks = _hooks(calls, question, check, steps.append)
        prepared = await prepare(
            rpc, settings.rpc_url, request, obtain, options, hooks, lambda: [payer, account], journal
        )
        assert isinstance(prepared, Prepared)  # built unsigned here: it cannot have landed before
        outcome = await complete(rpc, prepared, hooks, journal)
        if not isinstance(outcome, Confirmed):
            error = outcome.error()
            assert error is not None  # sent and waited for: failed, expired or pending
            _done(steps)
            raise error
        created = NonceCreated(await fetch_nonce(rpc, address), account, outcome)
    _done(steps)
    return created


def _hooks(
    calls: _Calls, question: str, check: Callable[[Prepared], None], when_shown: Callable[[Callable[[], None]], None]
) -> Hooks:
    """The pipeline's hooks: the creation's check and the caller's question before signing; the
    caller told of the send as soon as it happened."""
    from yieldcli.chain.transact.engine import Hooks
    from yieldcli.chain.transact.outcomes import ConfirmationRequired

    seen: list[Prepared] = []
    told: list[str] = []  # the signature, once the caller was told it was sent

    def confirm(_text: str, prepared: Prepared) -> bool | Awaitable[bool]:
        check(prepared)
        if calls.confirm is None:
            raise ConfirmationRequired("nothing was signed: signing needs a confirm callback that says yes")
        seen.append(prepared)
        return calls.confirm(question, prepared)

    def progress(stage: str, commitment: str | None) -> None:
        if calls.on_sent is not None and seen and not told and stage == "waiting" and commitment is None:
            told.append(str(seen[0].result["signature"]))  # once: the first wait follows the send
            calls.on_sent(told[0])
        if calls.progress is not None:
            calls.progress(stage, commitment)

    hooks = Hooks(confirm=confirm, progress=progress, when_shown=when_shown)
    if calls.warn is not None:
        hooks.warn = calls.warn
    if calls.log is not None:
        hooks.log = calls.log
    return hooks


def _check_creation(prepared: Prepared, built: VersionedTransaction, rent: int, address: str) -> None:
    """The check that stands for an action row's expected effect, which no row gives for creating a
    nonce account: what is signed is byte for byte the message built here from the System program's
    two instructions (create the account funded with `rent`, the rent-exempt minimum read from the
    chain; initialize its nonce with the authority asked for), with no priority fee; and its
    simulation (which ran and succeeded, or the pipeline refused before this) changed exactly two
    accounts: the payer's lamports by -(rent + fee), the new account's by +rent."""
    fees, effect = prepared.fees, prepared.effect
    message = prepared.transaction.message
    payer = str(built.message.account_keys[0])  # the fee payer's is always the first key
    changed = {a["address"]: a["lamports_change"] for a in (effect.observed.get("accounts", ()) if effect else ())}
    if (
        bytes(message) != bytes(built.message)
        or fees is None
        or fees.priority_fee
        or changed != {payer: -(rent + fees.total), address: rent}
    ):
        raise Refused(
            "refusing to sign: the transaction is not the nonce account's creation built here, or its simulated "
            "effect is not that creation's; nothing was signed",
            kind="refused.mismatch.nonce",
        )


def _question(rpc_url: str, address: Any, authority: str, lamports: int, payer: Any) -> str:
    from yieldcli.chain.fees.compute_budget import sol_text
    from yieldcli.urls import redact_url

    return (
        f"Create nonce account {address} on {redact_url(rpc_url)}, authority {authority}, "
        f"funded with {lamports} lamports ({sol_text(lamports)} SOL) by {payer}?"
    )


def _done(steps: list[Callable[[], None]]) -> None:
    """The outcome is the caller's now: its send's journal record is done with."""
    for step in steps:
        step()
