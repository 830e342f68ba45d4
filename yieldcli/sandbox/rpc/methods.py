"""The JSON-RPC methods of the sandbox's validator, answered from its `Runtime`."""

from __future__ import annotations

from typing import Any

from solders.account import Account
from solders.message import Message, from_bytes_versioned
from solders.pubkey import Pubkey

from yieldcli.sandbox.chain.records import fee_for
from yieldcli.sandbox.rpc.encoding import account_json
from yieldcli.sandbox.rpc.params import (
    Answering,
    Invalid,
    account_commitment,
    asked_commitment,
    b64,
    decode_tx,
    options,
    param,
    pubkey,
)
from yieldcli.sandbox.runtime import Runtime, token_amount_json
from yieldcli.solana import programs


class Methods(Answering):
    """Standard methods; `RpcServer` maps names to them."""

    def _account(self, account: Account | None, config: dict[str, Any], default: str) -> dict[str, Any] | None:
        return account_json(account, config.get("encoding", default), config.get("dataSlice"), self._decimals)

    def _get_latest_blockhash(self, params: list[Any]) -> dict[str, Any]:
        blockhash, last_valid = self.runtime.latest_blockhash(asked_commitment())
        return self._context({"blockhash": blockhash, "lastValidBlockHeight": last_valid})

    def _get_epoch_info(self, params: list[Any]) -> dict[str, Any]:
        slot = self._asked_slot()
        return {
            "absoluteSlot": slot,
            "blockHeight": self.runtime.height_of(slot),
            "epoch": slot // 432_000,
            "slotIndex": slot % 432_000,
            "slotsInEpoch": 432_000,
            "transactionCount": self.runtime.history().transactions,
        }

    def _is_blockhash_valid(self, params: list[Any]) -> dict[str, Any]:
        return self._context(self.runtime.is_blockhash_valid(str(param(params, 0))))

    def _send_transaction(self, params: list[Any]) -> str:
        config = options(params, 1)
        tx = decode_tx(param(params, 0), config.get("encoding", "base58"))
        outcome = self.runtime.send_transaction(tx, skip_preflight=bool(config.get("skipPreflight", False)))
        return outcome.signature

    def _simulate_transaction(self, params: list[Any]) -> dict[str, Any]:
        config = options(params, 1)
        tx = decode_tx(param(params, 0), config.get("encoding", "base58"))
        accounts_config = config.get("accounts") or {}
        addresses = [pubkey(a) for a in accounts_config.get("addresses", [])]
        encoding = accounts_config.get("encoding", "base64")
        value = self.runtime.simulate(
            tx,
            sig_verify=bool(config.get("sigVerify", False)),
            replace_recent_blockhash=bool(config.get("replaceRecentBlockhash", False)),
            accounts=addresses,
            inner_instructions=bool(config.get("innerInstructions", False)),
        )
        if value["accounts"] is not None:
            value["accounts"] = [account_json(a, encoding, None, self._decimals) for a in value["accounts"]]
        return self._context(value)

    def _get_signature_statuses(self, params: list[Any]) -> dict[str, Any]:
        signatures = param(params, 0)
        if not isinstance(signatures, list) or len(signatures) > 256:
            raise Invalid("Invalid params: expected an array of at most 256 signatures")
        statuses: list[dict[str, Any] | None] = []
        history = self.runtime.history()
        for signature in signatures:
            record = self.runtime.status(str(signature))
            if record is None:
                statuses.append(None)
                continue
            level = history.status_of(record.slot)
            statuses.append(
                {
                    "slot": record.slot,
                    # Blocks voted on since (the one node votes on each), null once rooted, as a validator counts.
                    "confirmations": None if level == "finalized" else max(history.confirmed - record.slot, 0),
                    "err": record.err,
                    "status": {"Ok": None} if record.err is None else {"Err": record.err},
                    "confirmationStatus": level,
                }
            )
        # As a validator answers: statuses are read from its newest (processed) bank, and say so.
        return self._context_at(self.runtime.commitment_slot("processed"), statuses)

    def _get_account_info(self, params: list[Any]) -> dict[str, Any]:
        config = options(params, 1)
        slot, account = self.runtime.account_at(pubkey(param(params, 0)), account_commitment())
        return self._context_at(slot, self._account(account, config, "binary"))

    def _get_multiple_accounts(self, params: list[Any]) -> dict[str, Any]:
        config = options(params, 1)
        addresses = param(params, 0)
        if not isinstance(addresses, list) or len(addresses) > 100:
            raise Invalid("Invalid params: expected an array of at most 100 addresses")
        keys = [pubkey(a) for a in addresses]
        with self.runtime.lock:  # every account from the one slot
            read = [self.runtime.account_at(k, account_commitment()) for k in keys]
        slot = read[0][0] if read else self._asked_slot()
        return self._context_at(slot, [self._account(a, config, "base64") for _, a in read])

    def _get_balance(self, params: list[Any]) -> dict[str, Any]:
        slot, account = self.runtime.account_at(pubkey(param(params, 0)), account_commitment())
        return self._context_at(slot, account.lamports if account is not None else 0)

    def _get_token_account_balance(self, params: list[Any]) -> dict[str, Any]:
        address = pubkey(param(params, 0))
        slot, account = self.runtime.account_at(address, account_commitment())
        if account is None:
            raise Invalid("Invalid param: could not find account")
        parsed = programs.parse_token_account(str(account.owner), bytes(account.data))
        if parsed is None:
            raise Invalid("Invalid param: not a Token account")
        mint, _, amount = parsed
        decimals = self.runtime.mint_decimals(Pubkey.from_string(mint))
        if decimals is None:
            raise Invalid("Invalid param: could not find mint")
        return self._context_at(slot, token_amount_json(amount, decimals))

    def _get_minimum_balance(self, params: list[Any]) -> int:
        size = param(params, 0)
        if type(size) is not int or size < 0:
            raise Invalid("Invalid params: data length must be a non-negative integer")
        return self.runtime.minimum_balance_for_rent_exemption(size)

    def _get_fee_for_message(self, params: list[Any]) -> dict[str, Any]:
        raw = b64(param(params, 0))
        try:
            message = from_bytes_versioned(raw) if raw and raw[0] & 0x80 else Message.from_bytes(raw)
        except BaseException as exc:  # pyo3 panics are BaseExceptions
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            raise Invalid(f"Invalid params: not a transaction message: {exc}") from None
        # A message whose blockhash has expired has no fee (the real RPC answers null).
        if not self.runtime.is_blockhash_valid(str(message.recent_blockhash)):
            return self._context(None)
        return self._context(fee_for(message))

    def _get_recent_prioritization_fees(self, params: list[Any]) -> list[dict[str, int]]:
        addresses = param(params, 0, [])
        if not isinstance(addresses, list) or len(addresses) > 128:
            raise Invalid("Invalid params: expected an array of at most 128 addresses")
        for address in addresses:
            pubkey(address)
        return self.runtime.recent_prioritization_fees()

    def _request_airdrop(self, params: list[Any]) -> str:
        lamports = param(params, 1)
        if type(lamports) is not int or lamports <= 0:
            raise Invalid("Invalid params: lamports must be a positive integer")
        return self.runtime.airdrop(pubkey(param(params, 0)), lamports)


class SandboxControls:
    """Non-standard `sandbox_*` methods steering the test faults from another process."""

    runtime: Runtime

    def _set_fault(self, params: list[Any]) -> dict[str, Any]:
        first = param(params, 0)
        if isinstance(first, dict):
            given = dict(first)
            kind = given.pop("kind", None)
        else:
            kind, given = first, options(params, 1)
        if not isinstance(kind, str):
            raise Invalid("Invalid params: name a fault: slow, expire, fail, pending, release or clear")
        try:
            return self.runtime.set_fault(kind, **given).to_dict()
        except ValueError as exc:
            raise Invalid(f"Invalid params: {exc}") from None

    def _clear_faults(self, params: list[Any]) -> dict[str, Any]:
        return self.runtime.set_fault("clear").to_dict()

    def _release_pending(self, params: list[Any]) -> list[dict[str, Any]]:
        return [{"signature": o.signature, "landed": o.landed} for o in self.runtime.release_pending()]

    def _expire_blockhash(self, params: list[Any]) -> None:
        self.runtime.expire_blockhash()
        return None

    def _mint_to(self, params: list[Any]) -> str:
        amount = param(params, 2)
        if type(amount) is not int or amount <= 0:
            raise Invalid("Invalid params: amount must be a positive integer of base units")
        return str(self.runtime.mint_to(pubkey(param(params, 0)), pubkey(param(params, 1)), amount))
