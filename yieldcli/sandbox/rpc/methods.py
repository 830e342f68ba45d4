"""The JSON-RPC methods of the sandbox's validator, answered from its `Runtime`."""

from __future__ import annotations

import base64
from typing import Any

from solders.message import Message, from_bytes_versioned
from solders.pubkey import Pubkey

from yieldcli.addresses import b58encode
from yieldcli.sandbox.chain.records import fee_for
from yieldcli.sandbox.rpc.params import Invalid, account_json, b64, decode_tx, options, param, pubkey
from yieldcli.sandbox.runtime import Runtime, RuntimeRpcError, token_amount_json
from yieldcli.solana import programs

API_VERSION = "2.2.0"


class Methods:
    """Standard methods; `RpcServer` maps names to them."""

    runtime: Runtime

    def _context(self, value: Any) -> dict[str, Any]:
        return {"context": {"apiVersion": API_VERSION, "slot": self.runtime.slot}, "value": value}

    def _get_latest_blockhash(self, params: list[Any]) -> dict[str, Any]:
        blockhash, last_valid = self.runtime.latest_blockhash()
        return self._context({"blockhash": blockhash, "lastValidBlockHeight": last_valid})

    def _get_epoch_info(self, params: list[Any]) -> dict[str, Any]:
        slot = self.runtime.slot
        return {
            "absoluteSlot": slot,
            "blockHeight": self.runtime.block_height,
            "epoch": slot // 432_000,
            "slotIndex": slot % 432_000,
            "slotsInEpoch": 432_000,
            "transactionCount": None,
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
        )
        if value["accounts"] is not None:
            value["accounts"] = [account_json(a, encoding) for a in value["accounts"]]
        return self._context(value)

    def _get_signature_statuses(self, params: list[Any]) -> dict[str, Any]:
        signatures = param(params, 0)
        if not isinstance(signatures, list) or len(signatures) > 256:
            raise Invalid("Invalid params: expected an array of at most 256 signatures")
        statuses: list[dict[str, Any] | None] = []
        for signature in signatures:
            record = self.runtime.status(str(signature))
            if record is None:
                statuses.append(None)
                continue
            statuses.append(
                {
                    "slot": record.slot,
                    "confirmations": None,
                    "err": record.err,
                    "status": {"Ok": None} if record.err is None else {"Err": record.err},
                    # One node, no forks: a landed transaction is final at once.
                    "confirmationStatus": "finalized",
                }
            )
        return self._context(statuses)

    def _get_transaction(self, params: list[Any]) -> dict[str, Any] | None:
        config = options(params, 1)
        record = self.runtime.status(str(param(params, 0)))
        if record is None:
            return None
        if record.version != "legacy" and config.get("maxSupportedTransactionVersion") is None:
            raise RuntimeRpcError(
                -32015,
                "Transaction version (0) is not supported by the requesting client. "
                "Please try the request again with the following configuration parameter: "
                '"maxSupportedTransactionVersion": 0',
            )
        encoding = config.get("encoding", "json")
        raw = base64.b64decode(record.transaction)
        transaction = [b58encode(raw), "base58"] if encoding == "base58" else [record.transaction, "base64"]
        return {
            "slot": record.slot,
            "blockTime": record.block_time,
            "version": record.version,
            "transaction": transaction,
            "meta": {
                "err": record.err,
                "status": {"Ok": None} if record.err is None else {"Err": record.err},
                "fee": record.fee,
                "preBalances": record.pre_balances,
                "postBalances": record.post_balances,
                "innerInstructions": record.inner_instructions,
                "logMessages": record.logs,
                "preTokenBalances": record.pre_token_balances,
                "postTokenBalances": record.post_token_balances,
                "rewards": [],
                "loadedAddresses": {"writable": record.loaded_writable, "readonly": record.loaded_readonly},
                "computeUnitsConsumed": record.units_consumed,
            },
        }

    def _get_account_info(self, params: list[Any]) -> dict[str, Any]:
        config = options(params, 1)
        account = self.runtime.get_account(pubkey(param(params, 0)))
        return self._context(account_json(account, config.get("encoding", "binary"), config.get("dataSlice")))

    def _get_multiple_accounts(self, params: list[Any]) -> dict[str, Any]:
        config = options(params, 1)
        addresses = param(params, 0)
        if not isinstance(addresses, list) or len(addresses) > 100:
            raise Invalid("Invalid params: expected an array of at most 100 addresses")
        encoding = config.get("encoding", "base64")
        accounts = [self.runtime.get_account(pubkey(a)) for a in addresses]
        return self._context([account_json(a, encoding, config.get("dataSlice")) for a in accounts])

    def _get_balance(self, params: list[Any]) -> dict[str, Any]:
        return self._context(self.runtime.get_balance(pubkey(param(params, 0))))

    def _get_token_account_balance(self, params: list[Any]) -> dict[str, Any]:
        address = pubkey(param(params, 0))
        account = self.runtime.get_account(address)
        if account is None:
            raise Invalid("Invalid param: could not find account")
        parsed = programs.parse_token_account(str(account.owner), bytes(account.data))
        if parsed is None:
            raise Invalid("Invalid param: not a Token account")
        mint, _, amount = parsed
        decimals = self.runtime.mint_decimals(Pubkey.from_string(mint))
        if decimals is None:
            raise Invalid("Invalid param: could not find mint")
        return self._context(token_amount_json(amount, decimals))

    def _get_token_accounts_by_owner(self, params: list[Any]) -> dict[str, Any]:
        owner = str(pubkey(param(params, 0)))
        selector = param(params, 1)
        config = options(params, 2)
        if not isinstance(selector, dict) or not ({"mint", "programId"} & selector.keys()):
            raise Invalid('Invalid params: give {"mint": ...} or {"programId": ...}')
        program = selector.get("programId", programs.TOKEN_PROGRAM)
        if program not in programs.TOKEN_PROGRAMS:
            raise Invalid("Invalid params: unrecognized Token program id")
        mint = selector.get("mint")
        found = []
        for address, account in self.runtime.program_accounts(Pubkey.from_string(program)):
            parsed = programs.parse_token_account(program, bytes(account.data))
            if parsed and parsed[1] == owner and (mint is None or parsed[0] == mint):
                found.append(
                    {"pubkey": str(address), "account": account_json(account, config.get("encoding", "base64"))}
                )
        return self._context(found)

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
