"""The service's transactions: `/…/tx` gives one whole, `/…/ix` gives instructions compiled here."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from yieldcli.chain.transact.types import Obtain, TransactionToReview
from yieldcli.errors import ServiceError, UsageError

if TYPE_CHECKING:
    from solders.transaction import VersionedTransaction

    from yieldcli.chain.tx.nonce import OnNonce

Post = Callable[[str, Mapping[str, Any]], Any]  # the body, or an awaitable of it (an asyncio client)


# Where published integrations have been seen to put the transaction in a `/tx` answer object.
_TRANSACTION_KEYS = ("encoded_transaction", "transaction", "result")


def unsigned_from_service(body: Any) -> str:
    """The base64 transaction of a `/tx` answer, in every shape seen: a JSON string, bare base64 text
    (the client hands it over as a string), or an object holding it under `encoded_transaction`,
    `transaction` or `result` (`{"success": true, "result": ...}`; `"success": false` is a refusal)."""
    if isinstance(body, str):
        return body
    if isinstance(body, dict):
        if body.get("success") is False:
            reason = next((body[k] for k in ("message", "error") if isinstance(body.get(k), str)), None)
            raise ServiceError(
                f"the service refused to build the transaction: {reason}"
                if reason
                else "the service answered success: false without a transaction"
            )
        for key in _TRANSACTION_KEYS:
            if isinstance(body.get(key), str):
                return str(body[key])
    raise ServiceError("the service answered without a transaction (expected base64 text)")


def from_service(
    post: Post, path: str, params: Mapping[str, Any], payer: str, *, ix: bool, nonce: OnNonce | None = None
) -> Obtain:
    """How to obtain the transaction for `path` (e.g. "/deposit"): whole, or compiled for `payer` from
    the instructions (the answer then travels with it, as it came), on a durable nonce when given one."""
    if nonce is not None and not ix:
        raise UsageError(
            "a durable nonce is built into a transaction compiled from the service's instructions",
            kind="usage.nonce.needs_ix",
        )

    async def obtain(rpc: Any) -> TransactionToReview:
        if nonce is not None:
            from solders.pubkey import Pubkey

            from yieldcli.chain.tx.nonce import build_on_nonce_account

            body = await _answer(post(f"{path}/ix", params))
            unsigned, tables = await build_on_nonce_account(rpc, body, Pubkey.from_string(payer), nonce)
            # No block-height deadline: it lives as long as its nonce.
            return TransactionToReview(unsigned, None, tables, service_answer=body, nonce=nonce.account)
        if ix:
            from solders.pubkey import Pubkey

            from yieldcli.chain.tx.instructions import build_from_ix

            body = await _answer(post(f"{path}/ix", params))
            built = await build_from_ix(rpc, body, Pubkey.from_string(payer))
            return TransactionToReview(
                built.transaction, built.last_valid_block_height, built.lookup_tables, service_answer=body
            )
        from yieldcli.chain.tx.decode import decode_transaction

        return TransactionToReview(decode_transaction(unsigned_from_service(await _answer(post(f"{path}/tx", params)))))

    return obtain


def given(tx: VersionedTransaction) -> Obtain:
    """A transaction built elsewhere, reviewed as it is."""

    async def obtain(rpc: Any) -> TransactionToReview:
        return TransactionToReview(tx)

    return obtain


async def _answer(body: Any) -> Any:
    return await body if inspect.isawaitable(body) else body
