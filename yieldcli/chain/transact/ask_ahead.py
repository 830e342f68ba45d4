"""The questions the pipeline will ask about a transaction before sending it, asked ahead.

Between the service's answer and the send, the pipeline checks the cluster (its genesis hash, and
that it knows the blockhash), reads the transaction's deadline, reads lookup tables and the accounts
around a simulation. Each of those is a round trip when asked when needed; asked ahead, the
questions that do not depend on another answer ride on the first exchange (`Rpc.ask_ahead`), and
the checks then find their answers waiting. Nothing is decided from an answer asked ahead that
would not have been decided from the same question asked later: each answer is used once, by the
check that asks exactly that question, in the order the checks always ran.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yieldcli.chain.transact.types import TransactionToReview, TransactOptions


def ask_ahead_for(rpc: Any, to_review: TransactionToReview, options: TransactOptions) -> None:
    """Ask ahead the cluster and deadline questions `prepare` will ask about `to_review`."""
    from solders.message import Message, MessageV0

    from yieldcli.chain.tx.nonce import nonce_lifetime

    message = to_review.transaction.message
    if rpc is None or not hasattr(rpc, "ask_ahead") or not (options.sign or options.send):
        return
    if not isinstance(message, (Message, MessageV0)):
        return  # refused by the review, which says why
    if nonce_lifetime(message) is not None:
        return  # a durable nonce's checks read its nonce account, after the fee is set
    blockhash = str(message.recent_blockhash)
    calls: list[tuple[str, list[Any]]] = []
    if options.send:  # the cluster check (`check_same_cluster`)
        if rpc.known_genesis() is None:
            calls.append(("getGenesisHash", []))
        calls.append(("isBlockhashValid", [blockhash, {"commitment": "processed"}]))
    if to_review.last_valid_block_height is None:  # the deadline (`deadline_for`)
        calls.append(("isBlockhashValid", [blockhash, {"commitment": rpc.commitment}]))
        calls.append(("getLatestBlockhash", [{"commitment": rpc.commitment}]))
    # The height the question before signing measures the transaction's lifetime from (`lifetime_text`).
    calls.append(("getBlockHeight", [{"commitment": "processed"}]))
    rpc.ask_ahead(calls)


def ask_ahead_check_reads(rpc: Any, to_review: TransactionToReview, options: TransactOptions) -> None:
    """With a priority fee to set, an exchange (its question and the units simulation) comes before
    the intent check: the check's pre-read rides on it, and the owners and mints it shows are then
    read with the simulation instead of after it. Without one, the pre-read travels with the check."""
    from solders.pubkey import Pubkey

    from yieldcli.chain.guard.read import check_accounts
    from yieldcli.chain.rpc.read_around import reads_of

    if rpc is None or not hasattr(rpc, "ask_ahead") or options.priority_fee is None or not options.simulate:
        return
    tables = {str(t.key): [str(a) for a in t.addresses] for t in to_review.lookup_tables}
    try:
        addresses = check_accounts(to_review.transaction.message, tables)
    except ValueError:
        return  # a lookup table could not be read: the check says so itself
    rpc.ask_ahead(reads_of(rpc, [Pubkey.from_string(a) for a in addresses]))
