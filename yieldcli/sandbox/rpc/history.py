"""The JSON-RPC methods that read the ledger: blocks, transactions, and signatures by address."""

from __future__ import annotations

import base64
from typing import Any

from solders.transaction import VersionedTransaction

from yieldcli.addresses import b58decode
from yieldcli.sandbox.chain.history import History
from yieldcli.sandbox.chain.records import TxRecord
from yieldcli.sandbox.rpc.cluster import ACTIVATED_STAKE
from yieldcli.sandbox.rpc.encoding import DETAILS, transaction_with_meta, unknown
from yieldcli.sandbox.rpc.params import Answering, Invalid, encoding_options, options, param, pubkey
from yieldcli.sandbox.runtime import RuntimeRpcError
from yieldcli.solana import programs

MAX_SLOT_RANGE = 500_000
MAX_SIGNATURES = 1_000
MAX_SAMPLES = 720
SAMPLE_SLOTS = 150  # 60 seconds of 400 ms slots: a validator samples once a minute
MEMO_PROGRAMS = (programs.MEMO_PROGRAM, "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo")
_UNSUPPORTED_VERSION = (
    "Transaction version (0) is not supported by the requesting client. "
    "Please try the request again with the following configuration parameter: "
    '"maxSupportedTransactionVersion": 0'
)


def at_least_confirmed(config: dict[str, Any]) -> None:
    if config.get("commitment") == "processed":
        raise Invalid("Method does not support commitment below `confirmed`")


def with_version(record: TxRecord, config: dict[str, Any]) -> bool:
    """Whether the answer names the version: only when the client said which it supports (and it is one)."""
    most = config.get("maxSupportedTransactionVersion")
    if record.version != "legacy" and (most is None or most < record.version):
        raise RuntimeRpcError(-32015, _UNSUPPORTED_VERSION)
    return most is not None


def _slot(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise Invalid("Invalid params: a slot is a non-negative integer")
    return value


class LedgerMethods(Answering):
    def _block_of(self, history: History, slot: int, commitment: str | None = "confirmed") -> None:
        """Refuse a block not kept any more, or not yet complete at `commitment` (blocks never change once served)."""
        if slot < history.first_block:
            raise RuntimeRpcError(
                -32001,
                f"Block {slot} cleaned up, does not exist on node. First available block: {history.first_block}",
            )
        if slot > history.commitment_slot(commitment):
            raise RuntimeRpcError(-32004, f"Block not available for slot {slot}")

    def _get_block(self, params: list[Any]) -> dict[str, Any]:
        slot = _slot(param(params, 0))
        config = encoding_options(params, 1)
        at_least_confirmed(config)
        encoding = config.get("encoding", "json")
        details = config.get("transactionDetails", "full")
        if details not in DETAILS:
            raise unknown(details, DETAILS)
        rewards = config.get("rewards", True) is not False
        history = self.runtime.history()
        self._block_of(history, slot, config.get("commitment"))
        landed = history.by_slot.get(slot, [])
        parent_slot, previous = history.parent(slot)
        block: dict[str, Any] = {
            "blockHeight": history.block_height(slot),
            "blockTime": history.block_time(slot),
            "blockhash": history.blockhash(slot),
            "parentSlot": parent_slot,
            "previousBlockhash": previous,
        }
        if details in ("full", "accounts"):
            block["transactions"] = [
                transaction_with_meta(
                    r, encoding, with_version=with_version(r, config), details=details, rewards=rewards
                )
                for r in landed
            ]
        elif details == "signatures":
            block["signatures"] = [r.signature for r in landed]
        if rewards:
            block["rewards"] = []
        return block

    def _get_blocks(self, params: list[Any]) -> list[int]:
        start = _slot(param(params, 0))
        end_given = param(params, 1, None)
        config = end_given if isinstance(end_given, dict) else options(params, 2)
        at_least_confirmed(config)
        history = self.runtime.history()
        top = history.commitment_slot(config.get("commitment"))
        end = top if end_given is None or isinstance(end_given, dict) else _slot(end_given)
        if end - start > MAX_SLOT_RANGE:
            raise Invalid(f"Slot range too large; max {MAX_SLOT_RANGE}")
        return list(range(max(start, history.first_block), min(end, top) + 1))

    def _get_blocks_with_limit(self, params: list[Any]) -> list[int]:
        start, limit = _slot(param(params, 0)), _slot(param(params, 1))
        if limit > MAX_SLOT_RANGE:
            raise Invalid(f"Limit too large; max {MAX_SLOT_RANGE}")
        config = options(params, 2)
        at_least_confirmed(config)
        history = self.runtime.history()
        first = max(start, history.first_block)
        return list(range(first, min(first + limit, history.commitment_slot(config.get("commitment")) + 1)))

    def _get_block_time(self, params: list[Any]) -> int:
        slot = _slot(param(params, 0))
        history = self.runtime.history()
        # As a validator: a rooted block's time, or a confirmed one's.
        self._block_of(history, slot, "confirmed")
        return history.block_time(slot)

    def _get_first_available_block(self, params: list[Any]) -> int:
        return self.runtime.history().first_block

    def _get_transaction_count(self, params: list[Any]) -> int:
        return self.runtime.history().transactions

    def _get_block_commitment(self, params: list[Any]) -> dict[str, Any]:
        slot = _slot(param(params, 0))
        history = self.runtime.history()
        if slot <= history.finalized:  # a validator answers null for rooted blocks
            return {"commitment": None, "totalStake": ACTIVATED_STAKE}
        # Otherwise the stake voting on the block, by lockout depth (index 31: the deepest): the one node votes on each.
        depth = min(max(history.confirmed - slot, 0), 31) if slot <= history.confirmed else None
        commitment = [0] * 32
        if depth is not None:
            commitment[31 - depth] = ACTIVATED_STAKE
        return {"commitment": commitment if depth is not None else None, "totalStake": ACTIVATED_STAKE}

    def _get_transaction(self, params: list[Any]) -> dict[str, Any] | None:
        config = encoding_options(params, 1)
        at_least_confirmed(config)
        signature = param(params, 0)
        if not isinstance(signature, str) or len(b58decode_or_empty(signature)) != 64:
            raise Invalid("Invalid param: Invalid")
        record = self.runtime.status(signature)
        history = self.runtime.history()
        if record is None or record.slot > history.commitment_slot(config.get("commitment")):
            return None
        answer = transaction_with_meta(
            record, config.get("encoding", "json"), with_version=with_version(record, config)
        )
        return {"slot": record.slot, "blockTime": history.block_time(record.slot), **answer}

    def _get_signatures_for_address(self, params: list[Any]) -> list[dict[str, Any]]:
        address = str(pubkey(param(params, 0)))
        config = options(params, 1)
        at_least_confirmed(config)
        limit = config.get("limit") or MAX_SIGNATURES
        if type(limit) is not int or not 1 <= limit <= MAX_SIGNATURES:
            raise Invalid(f"Invalid limit; max {MAX_SIGNATURES}")
        before, until = config.get("before"), config.get("until")
        history = self.runtime.history()
        top = history.commitment_slot(config.get("commitment"))
        found: list[dict[str, Any]] = []
        started = before is None
        for record in reversed(history.records):
            if record.signature == until:
                break
            if not started:
                started = record.signature == before
                continue
            if record.slot > top or address not in history.account_keys(record):
                continue
            found.append(
                {
                    "signature": record.signature,
                    "slot": record.slot,
                    "err": record.err,
                    "memo": _memo(record, history),
                    "blockTime": history.block_time(record.slot),
                    "confirmationStatus": history.status_of(record.slot),
                }
            )
            if len(found) == limit:
                break
        return found

    def _get_recent_performance_samples(self, params: list[Any]) -> list[dict[str, Any]]:
        limit = param(params, 0, MAX_SAMPLES)
        if type(limit) is not int or not 0 <= limit <= MAX_SAMPLES:
            raise Invalid(f"Invalid limit; max {MAX_SAMPLES}")
        history = self.runtime.history()
        samples: list[dict[str, Any]] = []
        top = history.confirmed
        while len(samples) < limit and top > history.first_block:
            bottom = max(top - SAMPLE_SLOTS, history.first_block)
            count = sum(len(history.by_slot.get(s, [])) for s in range(bottom + 1, top + 1))
            samples.append(
                {
                    "slot": top,
                    "numTransactions": count,
                    "numNonVoteTransactions": count,
                    "numSlots": top - bottom,
                    "samplePeriodSecs": 60,
                }
            )
            top = bottom
        return samples


def b58decode_or_empty(text: str) -> bytes:
    try:
        return b58decode(text)
    except ValueError:
        return b""


def _memo(record: TxRecord, history: History) -> str | None:
    """The memos of a transaction as getSignaturesForAddress shows them: "[length] text", joined by "; "."""
    tx = VersionedTransaction.from_bytes(base64.b64decode(record.transaction))
    keys = history.account_keys(record)
    memos = []
    for ix in tx.message.instructions:
        if keys[ix.program_id_index] in MEMO_PROGRAMS:
            text = bytes(ix.data).decode("utf-8", errors="replace")
            memos.append(f"[{len(text.encode())}] {text}")
    return "; ".join(memos) or None
