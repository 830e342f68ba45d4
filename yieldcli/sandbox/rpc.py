"""Solana JSON-RPC 2.0 over loopback, answering from the sandbox `Runtime`.

Enough of the API for the CLI and solana-py's `AsyncClient`, with the fields solders' parsers need
(`context` on wrapped results, `lastValidBlockHeight`, `rentEpoch`, `status`). Non-standard
`sandbox_*` methods steer the test faults from another process:

    sandbox_setFault      ["slow", {"seconds": 0.5, "methods": ["getSignatureStatuses"]}]
                          ["expire" | "fail" | "pending", {"count": 1}]   ["release"]   ["clear"]
                          (or one object: [{"kind": "slow", "seconds": 0.5}])
    sandbox_getFaults     []
    sandbox_clearFaults   []
    sandbox_releasePending []            -> [{"signature", "landed"}]
    sandbox_advanceSlots  [n]            -> new block height
    sandbox_expireBlockhash []
    sandbox_mintTo        [owner, mint, amount]  -> associated token account
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from solders.account import Account
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from yieldcli.addresses import b58decode, b58encode
from yieldcli.amounts import scale
from yieldcli.chain import programs as p
from yieldcli.sandbox.runtime import Runtime, RuntimeRpcError, TxRecord, decode_wire_transaction

API_VERSION = "2.2.0"
SOLANA_CORE_VERSION = "2.2.0"
FEATURE_SET = 3294202862
LAMPORTS_PER_SIGNATURE = 5000
MAX_REQUEST_BYTES = 4 * 1024 * 1024


class _Invalid(RuntimeRpcError):
    def __init__(self, message: str):
        super().__init__(-32602, message)


class RpcServer:
    """`RpcServer(runtime).start()`; `.url`; `.stop()`. Also a context manager."""

    def __init__(
        self,
        runtime: Runtime,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        on_confirmed: Callable[[VersionedTransaction, TxRecord], Any] | None = None,
    ):
        self.runtime = runtime
        if on_confirmed is not None:
            runtime.on_confirmed = on_confirmed
        self._httpd = ThreadingHTTPServer((host, port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.rpc = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None
        self._methods: dict[str, Callable[[list[Any]], Any]] = {
            "getLatestBlockhash": self._get_latest_blockhash,
            "getBlockHeight": lambda params: runtime.block_height,
            "getSlot": lambda params: runtime.slot,
            "getEpochInfo": self._get_epoch_info,
            "isBlockhashValid": self._is_blockhash_valid,
            "sendTransaction": self._send_transaction,
            "simulateTransaction": self._simulate_transaction,
            "getSignatureStatuses": self._get_signature_statuses,
            "getTransaction": self._get_transaction,
            "getAccountInfo": self._get_account_info,
            "getMultipleAccounts": self._get_multiple_accounts,
            "getBalance": self._get_balance,
            "getTokenAccountBalance": self._get_token_account_balance,
            "getTokenAccountsByOwner": self._get_token_accounts_by_owner,
            "getMinimumBalanceForRentExemption": self._get_minimum_balance,
            "getFeeForMessage": self._get_fee_for_message,
            "requestAirdrop": self._request_airdrop,
            "getHealth": lambda params: "ok",
            "getVersion": lambda params: {"solana-core": SOLANA_CORE_VERSION, "feature-set": FEATURE_SET},
            "getGenesisHash": lambda params: "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG",
            "sandbox_setFault": self._set_fault,
            "sandbox_getFaults": lambda params: runtime.faults.to_dict(),
            "sandbox_clearFaults": self._clear_faults,
            "sandbox_releasePending": self._release_pending,
            "sandbox_advanceSlots": lambda params: runtime.advance_slots(int(_param(params, 0, 1))),
            "sandbox_expireBlockhash": self._expire_blockhash,
            "sandbox_mintTo": self._mint_to,
        }

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "RpcServer":
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> "RpcServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ---- dispatch

    def handle(self, body: bytes) -> bytes | None:
        """One HTTP body in, one out (None for a batch of notifications only)."""
        try:
            request = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return _dump(_error(None, -32700, "Parse error"))
        if isinstance(request, list):
            if not request:
                return _dump(_error(None, -32600, "Invalid request"))
            self._delay([r.get("method") for r in request if isinstance(r, dict)])
            answers = [self._answer(r) for r in request]
            return _dump(answers)
        if isinstance(request, dict):
            self._delay([request.get("method")])
        return _dump(self._answer(request))

    def _delay(self, methods: list[Any]) -> None:
        # Slow answers are served outside the runtime lock: other clients are not held up.
        seconds = max((self.runtime.faults.delay_for(str(m)) for m in methods if not str(m).startswith("sandbox_")), default=0.0)
        if seconds > 0:
            time.sleep(seconds)

    def _answer(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or request.get("jsonrpc") != "2.0" or not isinstance(request.get("method"), str):
            return _error(request.get("id") if isinstance(request, dict) else None, -32600, "Invalid request")
        rid = request.get("id")
        handler = self._methods.get(request["method"])
        if handler is None:
            return _error(rid, -32601, "Method not found")
        params = request.get("params", [])
        if params is None:
            params = []
        if not isinstance(params, list):
            return _error(rid, -32602, "Invalid params: expected an array")
        try:
            result = handler(params)
        except RuntimeRpcError as exc:
            return _error(rid, exc.code, exc.message, exc.data)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            return _error(rid, -32602, f"Invalid params: {exc}")
        except Exception as exc:  # a sandbox bug still answers, as a JSON-RPC internal error
            return _error(rid, -32603, f"Internal error: {type(exc).__name__}: {exc}")
        except BaseException as exc:
            # pyo3's PanicException derives from BaseException; anything else (KeyboardInterrupt...) goes on.
            if type(exc).__name__ != "PanicException":
                raise
            return _error(rid, -32603, f"Internal error: {exc}")
        return {"jsonrpc": "2.0", "result": result, "id": rid}

    def _context(self, value: Any) -> dict[str, Any]:
        return {"context": {"apiVersion": API_VERSION, "slot": self.runtime.slot}, "value": value}

    # ---- methods

    def _get_latest_blockhash(self, params: list[Any]) -> dict[str, Any]:
        blockhash, last_valid = self.runtime.latest_blockhash()
        return self._context({"blockhash": blockhash, "lastValidBlockHeight": last_valid})

    def _get_epoch_info(self, params: list[Any]) -> dict[str, Any]:
        slot = self.runtime.slot
        return {
            "absoluteSlot": slot, "blockHeight": self.runtime.block_height, "epoch": slot // 432_000,
            "slotIndex": slot % 432_000, "slotsInEpoch": 432_000, "transactionCount": None,
        }

    def _is_blockhash_valid(self, params: list[Any]) -> dict[str, Any]:
        return self._context(self.runtime.is_blockhash_valid(str(_param(params, 0))))

    def _send_transaction(self, params: list[Any]) -> str:
        config = _config(params, 1)
        tx = _decode_tx(_param(params, 0), config.get("encoding", "base58"))
        outcome = self.runtime.send_transaction(tx, skip_preflight=bool(config.get("skipPreflight", False)))
        return outcome.signature

    def _simulate_transaction(self, params: list[Any]) -> dict[str, Any]:
        config = _config(params, 1)
        tx = _decode_tx(_param(params, 0), config.get("encoding", "base58"))
        accounts_config = config.get("accounts") or {}
        addresses = [_pubkey(a) for a in accounts_config.get("addresses", [])]
        encoding = accounts_config.get("encoding", "base64")
        value = self.runtime.simulate(
            tx,
            sig_verify=bool(config.get("sigVerify", False)),
            replace_recent_blockhash=bool(config.get("replaceRecentBlockhash", False)),
            accounts=addresses,
        )
        if value["accounts"] is not None:
            value["accounts"] = [_account_json(a, encoding) for a in value["accounts"]]
        return self._context(value)

    def _get_signature_statuses(self, params: list[Any]) -> dict[str, Any]:
        signatures = _param(params, 0)
        if not isinstance(signatures, list) or len(signatures) > 256:
            raise _Invalid("Invalid params: expected an array of at most 256 signatures")
        statuses = []
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
        config = _config(params, 1)
        record = self.runtime.status(str(_param(params, 0)))
        if record is None:
            return None
        if record.version != "legacy" and config.get("maxSupportedTransactionVersion") is None:
            raise RuntimeRpcError(
                -32015,
                "Transaction version (0) is not supported by the requesting client. "
                "Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": 0",
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
                "innerInstructions": [],
                "logMessages": record.logs,
                "preTokenBalances": [],
                "postTokenBalances": [],
                "rewards": [],
                "loadedAddresses": {"writable": record.loaded_writable, "readonly": record.loaded_readonly},
                "computeUnitsConsumed": record.units_consumed,
            },
        }

    def _get_account_info(self, params: list[Any]) -> dict[str, Any]:
        config = _config(params, 1)
        account = self.runtime.get_account(_pubkey(_param(params, 0)))
        return self._context(_account_json(account, config.get("encoding", "binary"), config.get("dataSlice")))

    def _get_multiple_accounts(self, params: list[Any]) -> dict[str, Any]:
        config = _config(params, 1)
        addresses = _param(params, 0)
        if not isinstance(addresses, list) or len(addresses) > 100:
            raise _Invalid("Invalid params: expected an array of at most 100 addresses")
        encoding = config.get("encoding", "base64")
        accounts = [self.runtime.get_account(_pubkey(a)) for a in addresses]
        return self._context([_account_json(a, encoding, config.get("dataSlice")) for a in accounts])

    def _get_balance(self, params: list[Any]) -> dict[str, Any]:
        return self._context(self.runtime.get_balance(_pubkey(_param(params, 0))))

    def _get_token_account_balance(self, params: list[Any]) -> dict[str, Any]:
        address = _pubkey(_param(params, 0))
        account = self.runtime.get_account(address)
        if account is None:
            raise _Invalid("Invalid param: could not find account")
        parsed = p.parse_token_account(str(account.owner), bytes(account.data))
        if parsed is None:
            raise _Invalid("Invalid param: not a Token account")
        mint, _, amount = parsed
        decimals = self.runtime.mint_decimals(Pubkey.from_string(mint))
        if decimals is None:
            raise _Invalid("Invalid param: could not find mint")
        return self._context(_token_amount(amount, decimals))

    def _get_token_accounts_by_owner(self, params: list[Any]) -> dict[str, Any]:
        owner = str(_pubkey(_param(params, 0)))
        selector = _param(params, 1)
        config = _config(params, 2)
        if not isinstance(selector, dict) or not ({"mint", "programId"} & selector.keys()):
            raise _Invalid("Invalid params: give {\"mint\": ...} or {\"programId\": ...}")
        program = selector.get("programId", p.TOKEN_PROGRAM)
        if program not in p.TOKEN_PROGRAMS:
            raise _Invalid("Invalid params: unrecognized Token program id")
        mint = selector.get("mint")
        found = []
        for address, account in self.runtime.program_accounts(Pubkey.from_string(program)):
            parsed = p.parse_token_account(program, bytes(account.data))
            if parsed and parsed[1] == owner and (mint is None or parsed[0] == mint):
                found.append({"pubkey": str(address), "account": _account_json(account, config.get("encoding", "base64"))})
        return self._context(found)

    def _get_minimum_balance(self, params: list[Any]) -> int:
        size = _param(params, 0)
        if type(size) is not int or size < 0:
            raise _Invalid("Invalid params: data length must be a non-negative integer")
        return self.runtime.minimum_balance_for_rent_exemption(size)

    def _get_fee_for_message(self, params: list[Any]) -> dict[str, Any]:
        raw = _b64(_param(params, 0))
        # A versioned message starts with 0x80|version; its header follows. Legacy starts with the header.
        signatures = raw[1] if raw and raw[0] & 0x80 else (raw[0] if raw else 0)
        return self._context(signatures * LAMPORTS_PER_SIGNATURE)

    def _request_airdrop(self, params: list[Any]) -> str:
        lamports = _param(params, 1)
        if type(lamports) is not int or lamports <= 0:
            raise _Invalid("Invalid params: lamports must be a positive integer")
        return self.runtime.airdrop(_pubkey(_param(params, 0)), lamports)

    # ---- sandbox control

    def _set_fault(self, params: list[Any]) -> dict[str, Any]:
        first = _param(params, 0)
        if isinstance(first, dict):
            options = dict(first)
            kind = options.pop("kind", None)
        else:
            kind, options = first, _config(params, 1)
        if not isinstance(kind, str):
            raise _Invalid("Invalid params: name a fault: slow, expire, fail, pending, release or clear")
        try:
            return self.runtime.set_fault(kind, **options).to_dict()
        except ValueError as exc:
            raise _Invalid(f"Invalid params: {exc}") from None

    def _clear_faults(self, params: list[Any]) -> dict[str, Any]:
        return self.runtime.set_fault("clear").to_dict()

    def _release_pending(self, params: list[Any]) -> list[dict[str, Any]]:
        return [{"signature": o.signature, "landed": o.landed} for o in self.runtime.release_pending()]

    def _expire_blockhash(self, params: list[Any]) -> None:
        self.runtime.expire_blockhash()
        return None

    def _mint_to(self, params: list[Any]) -> str:
        amount = _param(params, 2)
        if type(amount) is not int or amount <= 0:
            raise _Invalid("Invalid params: amount must be a positive integer of base units")
        return str(self.runtime.mint_to(_pubkey(_param(params, 0)), _pubkey(_param(params, 1)), amount))


class _Handler(BaseHTTPRequestHandler):
    # Keep-alive, and no Nagle: without the second each request waits ~40-200 ms on delayed ACKs.
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "yield-sandbox-rpc"

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 < length <= MAX_REQUEST_BYTES:
            self._reply(400 if length <= 0 else 413, _dump(_error(None, -32600, "Invalid request")))
            return
        body = self.rfile.read(length)
        answer = self.server.rpc.handle(body)  # type: ignore[attr-defined]
        self._reply(200, answer or b"")

    def do_GET(self) -> None:  # noqa: N802
        if self.path.split("?", 1)[0] == "/health":
            self._reply(200, b"ok", "text/plain")
        else:
            self._reply(405, b"use POST with a JSON-RPC body", "text/plain")

    def _reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def _dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "error": error, "id": rid}


_MISSING = object()


def _param(params: list[Any], index: int, default: Any = _MISSING) -> Any:
    if index < len(params):
        return params[index]
    if default is _MISSING:
        raise _Invalid(f"Invalid params: missing parameter {index + 1}")
    return default


def _config(params: list[Any], index: int) -> dict[str, Any]:
    value = _param(params, index, None)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Invalid(f"Invalid params: parameter {index + 1} must be a configuration object")
    return value


def _pubkey(value: Any) -> Pubkey:
    if isinstance(value, str):
        try:
            raw = b58decode(value)
        except ValueError:
            raw = b""
        if len(raw) == 32:
            return Pubkey.from_bytes(raw)
    raise _Invalid(f"Invalid param: {value!r} is not a valid public key")


def _b64(value: Any) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (ValueError, TypeError):
        raise _Invalid("Invalid params: not base64 data") from None


def _decode_tx(value: Any, encoding: str) -> VersionedTransaction:
    if not isinstance(value, str):
        raise _Invalid("Invalid params: the transaction must be a string")
    if encoding == "base64":
        raw = _b64(value)
    elif encoding == "base58":
        try:
            raw = b58decode(value)
        except ValueError:
            raise _Invalid("Invalid params: not base58 data") from None
    else:
        raise _Invalid(f"Invalid params: unsupported encoding {encoding!r}; use base58 or base64")
    return decode_wire_transaction(raw)


def _account_json(account: Account | None, encoding: str, data_slice: dict[str, Any] | None = None) -> dict[str, Any] | None:
    if account is None:
        return None
    data = bytes(account.data)
    if data_slice:
        offset, length = int(data_slice.get("offset", 0)), int(data_slice.get("length", len(data)))
        data = data[offset : offset + length]
    if encoding in ("base64", "jsonParsed"):
        # jsonParsed falls back to base64, as the real RPC does for accounts it cannot parse.
        encoded: Any = [base64.b64encode(data).decode("ascii"), "base64"]
    elif encoding == "base58":
        encoded = [b58encode(data), "base58"]
    elif encoding == "binary":
        encoded = b58encode(data)
    else:
        raise _Invalid(f"Invalid params: unsupported account encoding {encoding!r}; use base64")
    return {
        "data": encoded,
        "executable": account.executable,
        "lamports": account.lamports,
        "owner": str(account.owner),
        "rentEpoch": account.rent_epoch,
        "space": len(account.data),
    }


def _token_amount(amount: int, decimals: int) -> dict[str, Any]:
    value = scale(amount, decimals)
    text = format(value.normalize(), "f") if value else "0"
    return {"amount": str(amount), "decimals": decimals, "uiAmount": float(value), "uiAmountString": text}
