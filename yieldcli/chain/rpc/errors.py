"""What an RPC's failures become: our errors, each saying which RPC and which request, the URL redacted.

`Rpc` (and its batches, `yieldcli.chain.rpc.batch`) inherit `RpcErrors`: a transport failure (timeout,
refused connection, HTTP status) and a JSON-RPC error answer are turned into the same errors whether
the request went alone or in a batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from yieldcli.chain.rpc.types import RpcError
from yieldcli.errors import ConfigError, NetworkError, TransactionExpired, TransactionFailed, YieldError
from yieldcli.solana.transaction_errors import describe_error
from yieldcli.urls import scrub


class PreflightFailed(TransactionFailed):
    """The RPC simulated the transaction before sending and it failed: nothing was sent, nothing spent."""

    def __init__(self, message: str, *, err: Any, logs: Sequence[str] = (), hint: str | None = None):
        super().__init__(message, hint=hint)
        self.err = err
        self.logs = tuple(logs)


class AlreadyProcessed(RpcError):
    """sendTransaction refused the transaction because this exact transaction has already landed."""


class RpcErrors:
    """The errors of one RPC, named by its shown (redacted) URL."""

    shown_url: str
    url: str
    timeout: float

    def unreadable(self, method: str) -> RpcError:
        return RpcError(f"RPC {self.shown_url} answered {method} with a response that could not be read")

    def transport_error(self, method: str, cause: BaseException | None) -> YieldError:
        import httpx2

        where = f"RPC {self.shown_url}"
        if isinstance(cause, httpx2.TimeoutException):
            return NetworkError(
                f"{where} did not answer {method} within {self.timeout:g} s",
                kind="network.rpc.timeout",
            )
        if isinstance(cause, httpx2.HTTPStatusError):
            status = cause.response.status_code
            if status in (401, 403):
                return ConfigError(
                    f"{where} refused {method} (HTTP {status})",
                    hint="check the RPC URL and any API key it needs",
                )
            if status == 429:
                return NetworkError(
                    f"{where} is rate limiting requests (HTTP 429)", hint="wait and try again, or use another RPC"
                )
            if status >= 500:
                return NetworkError(
                    f"{where} failed with HTTP {status} on {method}", hint="try again later, or use another RPC"
                )
            return RpcError(f"{where} answered {method} with HTTP {status}")
        if isinstance(cause, httpx2.ConnectError):
            return NetworkError(f"cannot connect to {where}", kind="network.rpc.unreachable")
        name = type(cause).__name__ if cause is not None else "unknown error"
        return NetworkError(
            f"connection to {where} failed during {method}: {name}", hint="check your network and try again"
        )

    def answer_error(self, method: str, code: int, message: str, data: Any) -> YieldError:
        message = scrub(str(message), self.url)  # providers repeat the URL, and its key, in their errors
        where = f"RPC {self.shown_url}"
        if code == -32002 and method == "sendTransaction":
            err = data.get("err") if isinstance(data, dict) else None
            logs = (data.get("logs") if isinstance(data, dict) else None) or ()
            if err == "AlreadyProcessed":
                return AlreadyProcessed(f"{where} says this transaction was already processed", code=code, data=data)
            # Said by the node before a send; a node may say it after forwarding too, so the sender
            # asks the chain before it says anything was not sent.
            if err == "BlockhashNotFound":
                return TransactionExpired(
                    f"{where} answered sendTransaction with BlockhashNotFound (the node does not know its blockhash)",
                    hint="build the transaction again to get a fresh blockhash",
                )
            why = describe_error(err) if err is not None else message
            return PreflightFailed(
                f"{where} answered sendTransaction: its simulation before sending failed: {why}",
                err=err,
                logs=logs,
            )
        if code == -32003:
            return PreflightFailed(
                f"{where} rejected the transaction's signatures",
                err="SignatureFailure",
                hint="a required signature is missing or does not match the message",
            )
        if code == -32016:  # asked with minContextSlot: this node is behind what another already showed
            return NetworkError(f"{where} answered {method} from a node behind the cluster", kind="network.rpc.behind")
        if code == -32005:
            return NetworkError(
                f"{where} is unhealthy or behind the cluster: {message}", hint="try again, or use another RPC"
            )
        return RpcError(f"{where} answered {method} with error {code}: {message}", code=code, data=data)
