"""One small async adapter over solana-py's `AsyncClient`, turning every RPC failure into our errors.

Requests go through `AsyncClient.send_rpc_request`, which hands back the JSON result or raises one
`SolanaJsonRpcError` carrying code, message and data: the typed methods' quirks (unknown error codes
returned as a bare `int`, pyo3 `PanicException` on -32002/-32005/-32016 without `data`) never reach
callers. solana-py is imported only when an `Rpc` is opened (the import costs ~230 ms).
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from solders.hash import Hash
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from yieldcli.chain.rpc.batch import send_batch
from yieldcli.chain.rpc.errors import AlreadyProcessed as AlreadyProcessed  # published here first
from yieldcli.chain.rpc.errors import PreflightFailed as PreflightFailed  # published here first
from yieldcli.chain.rpc.fate import FateReads
from yieldcli.chain.rpc.genesis_memory import recall, remember
from yieldcli.chain.rpc.types import (
    AccountInfo,
    LatestBlockhash,
    RpcError,
    Simulation,
    TokenAmount,
    key_of,
)
from yieldcli.solana.cluster import DEFAULT_COMMITMENT, cluster_of, commitment_rank
from yieldcli.urls import is_loopback, redact_url

if TYPE_CHECKING:  # imported when an Rpc opens: solana-py costs ~230 ms
    from solana.rpc.async_api import AsyncClient
    from solana.rpc.async_http_provider import AsyncHTTPProvider

    from yieldcli.chain.rpc.types import Answer, Call

_MAX_ACCOUNTS_PER_CALL = 100


def explorer_url(signature: Signature | str, rpc_url: str) -> str | None:
    """The public explorer's page of the transaction; None for a local cluster (loopback), which a
    public explorer cannot show once the local validator or sandbox is gone."""
    base = f"https://explorer.solana.com/tx/{signature}"
    cluster = cluster_of(rpc_url)
    if cluster == "mainnet-beta":
        return base
    if cluster in ("devnet", "testnet"):
        return f"{base}?cluster={cluster}"
    if is_loopback(urlsplit(rpc_url).hostname):
        return None
    # Shown redacted: the URL may carry an API key.
    return f"{base}?cluster=custom&customUrl={quote(redact_url(rpc_url).removesuffix('/…'), safe='')}"


class Rpc(FateReads):
    """Async Solana JSON-RPC client. Use `async with Rpc(url) as rpc:`; methods raise yieldcli errors."""

    def __init__(self, url: str, *, timeout: float = 30.0, commitment: str = DEFAULT_COMMITMENT):
        commitment_rank(commitment)
        self.url = url
        self.shown_url = redact_url(url)
        self.timeout = timeout
        self.commitment = commitment
        self._client: AsyncClient | None = None
        self._ids = itertools.count(1)
        self._genesis: str | None = None
        self._riders: list[Call] = []  # asked ahead, sent with the next exchange
        self._answered: dict[str, Answer] = {}  # answers asked ahead, each used once

    async def __aenter__(self) -> Rpc:
        self._open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def _open(self) -> AsyncClient:
        if self._client is None:
            from solana.rpc.async_api import AsyncClient

            # No transport retries: a timeout means `timeout` seconds, not twice that.
            self._client = AsyncClient(self.url, timeout=self.timeout, max_transport_retries=0)
        return self._client

    async def call(self, method: str, params: list[Any] | None = None) -> Any:
        """The `result` of one JSON-RPC request (answered ahead, or riding with questions asked ahead),
        or raise a yieldcli error."""
        params = params or []
        answer = self._answered.pop(key_of(method, params), None)
        if answer is None and self._riders:
            (answer,) = await send_batch(self, [(method, params)])
        return answer.value() if answer is not None else await self.call_now(method, params)

    async def batch(self, calls: Sequence[Call]) -> list[Answer]:
        """Several questions in one HTTP exchange (with any asked ahead): their answers, in order."""
        return await send_batch(self, calls)

    def ask_ahead(self, calls: Sequence[Call]) -> None:
        """Questions the caller will ask soon: they ride on the next exchange, whatever it is."""
        known = {key_of(m, p) for m, p in self._riders} | set(self._answered)
        self._riders.extend(c for c in calls if key_of(*c) not in known)

    def take_riders(self) -> list[Call]:
        riders, self._riders = self._riders, []
        return riders

    def keep_answers(self, answers: dict[str, Answer]) -> None:
        self._answered.update(answers)

    def answered(self, call: Call) -> Answer | None:
        """The answer to `call` asked ahead and already received (used once), else None: nothing is sent."""
        return self._answered.pop(key_of(*call), None)

    def next_id(self) -> int:
        first = next(self._ids)
        self._ids = itertools.count(first + 1000)  # a batch's ids never meet the next request's
        return first

    def provider(self) -> AsyncHTTPProvider:
        return self._open()._provider

    async def call_now(self, method: str, params: list[Any]) -> Any:
        """Send one JSON-RPC request now and return its `result`, or raise a yieldcli error."""
        from pydantic import ValidationError
        from solana.exceptions import SolanaRpcException
        from solana.rpc.jsonrpc import JsonRpcRequest, SolanaJsonRpcError

        client = self._open()
        request = JsonRpcRequest(id=next(self._ids), method=method, params=params)
        try:
            return await client.send_rpc_request(request, Any)
        except SolanaJsonRpcError as exc:
            raise self.answer_error(method, exc.code, exc.message, exc.data) from None
        except SolanaRpcException as exc:
            raise self.transport_error(method, exc.__cause__) from None
        except ValidationError:
            raise RpcError(
                f"RPC {self.shown_url} answered {method} with something that is not a JSON-RPC response"
            ) from None
        except BaseException as exc:
            # pyo3's PanicException derives from BaseException; never let it crash the CLI.
            if type(exc).__name__ == "PanicException":
                raise self.unreadable(method) from None
            raise

    def _commitment(self, commitment: str | None) -> dict[str, str]:
        level = commitment or self.commitment
        commitment_rank(level)
        return {"commitment": level}

    # ---- blocks and blockhashes

    async def latest_blockhash(self, commitment: str | None = None) -> LatestBlockhash:
        result = await self.call("getLatestBlockhash", [self._commitment(commitment)])
        with self._reading("getLatestBlockhash"):
            value = result["value"]
            return LatestBlockhash(
                Hash.from_string(value["blockhash"]), int(value["lastValidBlockHeight"]), int(result["context"]["slot"])
            )

    async def slot(self, commitment: str | None = None) -> int:
        return int(await self.call("getSlot", [self._commitment(commitment)]))

    async def is_blockhash_valid(self, blockhash: Hash | str, commitment: str | None = None) -> bool:
        return (await self.blockhash_validity(blockhash, commitment))[0]

    # ---- transactions

    async def simulate(
        self, tx: VersionedTransaction, *, accounts: Sequence[Pubkey] = (), commitment: str | None = None
    ) -> Simulation:
        """Simulate without signature checks and with the transaction's own blockhash.

        `accounts` are returned as they would be after the transaction; those that are token
        accounts also get their balance before and after in `token_balances`.
        """
        from yieldcli.chain.rpc.read_around import simulation_config, simulation_of

        keys = list(accounts)
        before = await self.multiple_accounts(keys, commitment=commitment) if keys else []
        config = simulation_config(self._commitment(commitment)["commitment"], keys)
        result = await self.call("simulateTransaction", [base64.b64encode(bytes(tx)).decode("ascii"), config])
        with self._reading("simulateTransaction"):
            return simulation_of(result["value"], keys, before)

    async def send(
        self,
        tx: VersionedTransaction | bytes,
        *,
        skip_preflight: bool = False,
        preflight_commitment: str | None = None,
        max_retries: int | None = None,
    ) -> Signature:
        raw = bytes(tx)
        config: dict[str, Any] = {
            "encoding": "base64",
            "skipPreflight": skip_preflight,
            "preflightCommitment": preflight_commitment or self.commitment,
        }
        if max_retries is not None:
            config["maxRetries"] = max_retries
        result = await self.call("sendTransaction", [base64.b64encode(raw).decode("ascii"), config])
        with self._reading("sendTransaction"):
            return Signature.from_string(result)

    # ---- accounts

    async def account_info(self, address: Pubkey, *, commitment: str | None = None) -> AccountInfo | None:
        result = await self.call(
            "getAccountInfo", [str(address), {"encoding": "base64", **self._commitment(commitment)}]
        )
        with self._reading("getAccountInfo"):
            return _account(address, result["value"])

    async def multiple_accounts(
        self, addresses: Sequence[Pubkey], *, commitment: str | None = None
    ) -> list[AccountInfo | None]:
        out: list[AccountInfo | None] = []
        keys = list(addresses)
        for start in range(0, len(keys), _MAX_ACCOUNTS_PER_CALL):
            chunk = keys[start : start + _MAX_ACCOUNTS_PER_CALL]
            result = await self.call(
                "getMultipleAccounts", [[str(k) for k in chunk], {"encoding": "base64", **self._commitment(commitment)}]
            )
            values = result.get("value") if isinstance(result, dict) else None
            if not isinstance(values, list) or len(values) != len(chunk):
                # Zipping would drop the accounts a node leaves out, and a missing account reads as "absent".
                raise RpcError(
                    f"RPC {self.shown_url} answered getMultipleAccounts with "
                    f"{len(values) if isinstance(values, list) else 'no'} accounts for {len(chunk)} asked"
                )
            with self._reading("getMultipleAccounts"):
                out.extend(_account(k, raw) for k, raw in zip(chunk, values, strict=True))
        return out

    async def balance(self, address: Pubkey, *, commitment: str | None = None) -> int:
        result = await self.call("getBalance", [str(address), self._commitment(commitment)])
        with self._reading("getBalance"):
            return int(result["value"])

    async def token_account_balance(self, address: Pubkey, *, commitment: str | None = None) -> TokenAmount:
        result = await self.call("getTokenAccountBalance", [str(address), self._commitment(commitment)])
        with self._reading("getTokenAccountBalance"):
            value = result["value"]
            return TokenAmount(int(value["amount"]), int(value["decimals"]), str(value.get("uiAmountString") or ""))

    async def minimum_balance_for_rent_exemption(self, size: int) -> int:
        answer = await self.call("getMinimumBalanceForRentExemption", [size])
        with self._reading("getMinimumBalanceForRentExemption"):
            return int(answer)

    async def request_airdrop(self, address: Pubkey, lamports: int) -> Signature:
        return Signature.from_string(await self.call("requestAirdrop", [str(address), lamports]))

    # ---- node

    async def health(self) -> str:
        """'ok', or raises (an unhealthy node answers with error -32005)."""
        return str(await self.call("getHealth"))

    def known_genesis(self) -> str | None:
        """The cluster's identity without asking: asked before by this `Rpc`, or remembered for its URL."""
        if self._genesis is None:
            self._genesis = recall(self.url)
        return self._genesis

    async def genesis_hash(self) -> str:
        """The cluster's identity; asked once, as it never changes (and remembered for the URL a while)."""
        known = self.known_genesis()
        return known if known is not None else await self.genesis_hash_now()

    async def genesis_hash_now(self) -> str:
        """The cluster's identity as the RPC says it now, never from memory: before the chain's word
        settles a transaction, the chain must be the one it was sent to (a provider may switch backends)."""
        value = await self.call("getGenesisHash")
        if not isinstance(value, str) or not value:
            raise RpcError(f"RPC {self.shown_url} answered getGenesisHash with something that is not a hash")
        remember(self.url, value)
        self._genesis = value
        return value

    async def version(self) -> dict[str, Any]:
        return dict(await self.call("getVersion"))


def _account(address: Pubkey, raw: dict[str, Any] | None) -> AccountInfo | None:
    from yieldcli.chain.rpc.read_around import account_of

    return account_of(address, raw)
