"""What the chain says of a transaction's fate, read so it can be proof (`chain/transact/proof.py`): heights
with the slot they were read at, a blockhash's validity with its context slot, statuses with theirs, the
transaction itself, the signatures naming an address; each from no node behind a slot already seen
(`minContextSlot`), and an answer of the wrong shape the RPC's error, never a crash."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from solders.hash import Hash
from solders.signature import Signature

from yieldcli.chain.rpc.errors import RpcErrors
from yieldcli.chain.rpc.types import SignatureStatus, TransactionRecord

_MAX_STATUSES_PER_CALL = 256  # getSignatureStatuses takes at most 256 signatures


class FateReads(RpcErrors):
    """The base of `Rpc`, whose `call` and `_commitment` these reads use."""

    commitment: str

    async def call(self, method: str, params: list[Any] | None = None) -> Any:
        raise NotImplementedError

    def _commitment(self, commitment: str | None) -> dict[str, str]:
        raise NotImplementedError

    @contextmanager
    def _reading(self, method: str) -> Iterator[None]:
        """An answer of the wrong shape is the RPC's error, named as such: never a crash, never the service's."""
        try:
            yield
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            raise self.unreadable(method) from None

    async def block_height(self, commitment: str | None = None, *, min_context_slot: int | None = None) -> int:
        """The block height; with `min_context_slot`, from no node behind that slot (it errs instead)."""
        config: dict[str, Any] = self._commitment(commitment)
        if min_context_slot is not None:
            config["minContextSlot"] = min_context_slot
        with self._reading("getBlockHeight"):
            height = await self.call("getBlockHeight", [config])
            if type(height) is not int or height < 0:
                raise ValueError("not a block height")
            return height

    async def height_and_slot(
        self, commitment: str | None = None, *, min_context_slot: int | None = None
    ) -> tuple[int, int]:
        """The block height and the slot it was read at, from one answer (`getEpochInfo`); with
        `min_context_slot`, from no node behind that slot (it errs instead): heights read so can be compared."""
        config: dict[str, Any] = self._commitment(commitment)
        if min_context_slot is not None:
            config["minContextSlot"] = min_context_slot
        with self._reading("getEpochInfo"):
            info = await self.call("getEpochInfo", [config])
            height, slot = info["blockHeight"], info["absoluteSlot"]
            if type(height) is not int or type(slot) is not int or height < 0 or slot < 0:
                raise ValueError("not an epoch info")
            return height, slot

    async def blockhash_validity(
        self, blockhash: Hash | str, commitment: str | None = None, *, min_context_slot: int | None = None
    ) -> tuple[bool, int]:
        """Is `blockhash` still valid, and the slot the node answered at (never behind `min_context_slot`)."""
        config: dict[str, Any] = self._commitment(commitment)
        if min_context_slot is not None:
            config["minContextSlot"] = min_context_slot
        with self._reading("isBlockhashValid"):
            result = await self.call("isBlockhashValid", [str(blockhash), config])
            valid, slot = result["value"], result["context"]["slot"]
            if type(valid) is not bool or type(slot) is not int:
                raise ValueError("not a validity")
            return valid, slot

    async def signature_statuses(
        self, signatures: Sequence[Signature | str], *, search_history: bool = True
    ) -> list[SignatureStatus | None]:
        return (await self.signature_statuses_at(signatures, search_history=search_history))[0]

    async def signature_statuses_at(
        self, signatures: Sequence[Signature | str], *, search_history: bool = True
    ) -> tuple[list[SignatureStatus | None], int]:
        """The statuses and the lowest context slot they were answered at (a node's word is as of it)."""
        out: list[SignatureStatus | None] = []
        slots: list[int] = []
        sigs = [str(s) for s in signatures]
        for start in range(0, len(sigs), _MAX_STATUSES_PER_CALL):
            chunk = sigs[start : start + _MAX_STATUSES_PER_CALL]
            result = await self.call("getSignatureStatuses", [chunk, {"searchTransactionHistory": search_history}])
            with self._reading("getSignatureStatuses"):
                values, slot = result["value"], result["context"]["slot"]
                if not isinstance(values, list) or len(values) != len(chunk) or type(slot) is not int:
                    raise ValueError("not one status per signature")  # a status never shifts to another
                out.extend(None if item is None else _status(item) for item in values)
                slots.append(slot)
        return out, min(slots, default=0)

    async def first_available_block(self) -> int:
        """The lowest slot whose block the node still holds (getFirstAvailableBlock): its history starts there."""
        answer = await self.call("getFirstAvailableBlock", [])
        with self._reading("getFirstAvailableBlock"):
            if type(answer) is not int or answer < 0:
                raise ValueError("not a slot")
            return answer

    async def recent_signatures_of(
        self, address: str, *, limit: int = 1000, commitment: str | None = None, min_context_slot: int | None = None
    ) -> set[str]:
        """The newest signatures naming `address` (getSignaturesForAddress), from no node behind `min_context_slot`."""
        config: dict[str, Any] = {"limit": limit, **self._commitment(commitment)}
        if min_context_slot is not None:
            config["minContextSlot"] = min_context_slot
        result = await self.call("getSignaturesForAddress", [address, config])
        with self._reading("getSignaturesForAddress"):
            return {str(item["signature"]) for item in result}

    async def transaction(
        self, signature: Signature | str, *, commitment: str | None = None
    ) -> TransactionRecord | None:
        """The landed transaction's slot, error, logs and fee, or None when the node does not have it."""
        level = commitment or self.commitment
        if level == "processed":
            level = "confirmed"  # getTransaction does not accept processed
        result = await self.call(
            "getTransaction",
            [str(signature), {"encoding": "base64", "commitment": level, "maxSupportedTransactionVersion": 0}],
        )
        if result is None:
            return None
        with self._reading("getTransaction"):
            meta = result["meta"]
            slot, logs, fee = result["slot"], meta.get("logMessages"), meta.get("fee")
            if type(slot) is not int or not (logs is None or isinstance(logs, list)):
                raise ValueError("not a transaction")
            return TransactionRecord(slot, meta.get("err"), tuple(logs) if logs is not None else None, fee)


def _status(item: Any) -> SignatureStatus:
    slot, status = item["slot"], item.get("confirmationStatus")
    if type(slot) is not int or status not in (None, "processed", "confirmed", "finalized"):
        raise ValueError("not a signature status")
    return SignatureStatus(slot, item.get("confirmations"), item.get("err"), status)
