"""The sandbox service's request handling, independent of any HTTP server.

`Service.handle(method, path, query, headers, body)` returns a `Response` with the same paths,
bodies and error messages as the real service (interface.md, openapi.json). POST endpoints are
checked for the documented errors, then passed to `post_handlers[path]`; a path without a handler
answers 501.
"""

from __future__ import annotations

import hmac
import json
import re
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

from yieldcli.addresses import is_pubkey
from yieldcli.api.sort_fields import BALANCE_SORT_FIELDS, POSITION_SORT_FIELDS
from yieldcli.sandbox.faults import Fault, Faults
from yieldcli.sandbox.ledger import Ledger, LedgerError
from yieldcli.sandbox.listing import QueryError, paginate, parse_query, sorting
from yieldcli.sandbox.responses import (
    JSON,
    PLAIN_TEXT,
    BadRequest,
    Response,
    error_response,
    json_response,
    query_failure,
)

SERVED_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
MISSING_CREDENTIALS = "Missing credentials"
INVALID_KEY = "API key invalid or doesn't exist"
STRATEGY_NOT_FOUND = "Strategy not found"
NOT_IMPLEMENTED = "Not implemented in this sandbox yet"
INTERNAL_ERROR = "Internal server error"


def _wallet(text: str) -> str:
    if not is_pubkey(text):
        raise BadRequest(error_response(400, f"Invalid wallet address: {text!r}"))
    return text


# ---- POST bodies ---------------------------------------------------------------------------------

PostHandler = Callable[[dict[str, Any]], Response]

_STRING, _BOOL, _U64 = "string", "boolean", "u64"
_DEPOSIT_FIELDS = {
    "strategy_id": _STRING,
    "base_asset": _STRING,
    "amount": _U64,
    "all": _BOOL,
    "user_key": _STRING,
    "payer_key": _STRING,
    "user_token_account": _STRING,
    "fund_id": _STRING,
    "is_agent": _BOOL,
}
_WITHDRAW_FIELDS = {
    **_DEPOSIT_FIELDS,
    "create_wsol_ata": _BOOL,
    "unwrap_wsol_ata": _BOOL,
    "detect_wsol_ata": _BOOL,
    "exclude_fees": _BOOL,
    "no_balance_checks": _BOOL,
}
_CLOSE_FIELDS = {
    name: _STRING
    for name in ("user_account", "user_pubkey", "strategy_id", "mint", "payer", "funds_recipient", "user_token_account")
}
POST_FIELDS: dict[str, dict[str, str]] = {
    "/deposit/tx": _DEPOSIT_FIELDS,
    "/deposit/ix": _DEPOSIT_FIELDS,
    "/withdraw/tx": _WITHDRAW_FIELDS,
    "/withdraw/ix": _WITHDRAW_FIELDS,
    "/close-user-account/tx": _CLOSE_FIELDS,
    "/close-user-account/ix": _CLOSE_FIELDS,
}
CLOSE_IDENTITY_MESSAGE = "Either user_account or user_pubkey + strategy_id + mint must be provided"


def _type_error(value: Any, kind: str) -> str | None:
    if value is None:
        return None
    if kind == _STRING and not isinstance(value, str):
        return "expected a string"
    if kind == _BOOL and not isinstance(value, bool):
        return "expected a boolean"
    if kind == _U64:
        if isinstance(value, bool) or not isinstance(value, int):
            return "expected u64"
        if not 0 <= value < 2**64:
            return f"invalid value: integer `{value}`, expected u64"
    return None


def _params(path: str, headers: Mapping[str, str], body: bytes) -> dict[str, Any]:
    content_type = headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != JSON:
        raise BadRequest(error_response(415, "Expected request with `Content-Type: application/json`"))
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(error_response(400, f"Failed to parse the request body as JSON: {exc}")) from None
    if not isinstance(doc, dict):
        raise BadRequest(error_response(400, "Failed to deserialize the JSON body: expected an object"))
    if "params" not in doc:
        raise BadRequest(error_response(400, "Failed to deserialize the JSON body: missing field `params`"))
    params = doc["params"]
    if not isinstance(params, dict):
        raise BadRequest(error_response(400, "Failed to deserialize the JSON body: params: expected an object"))
    for name, kind in POST_FIELDS[path].items():
        problem = _type_error(params.get(name), kind)
        if problem:
            raise BadRequest(error_response(400, f"Failed to deserialize the JSON body: params.{name}: {problem}"))
    return params


def _documented_post_errors(path: str, params: dict[str, Any]) -> Response | None:
    if path.startswith("/deposit/") and not params.get("strategy_id"):
        return error_response(400, "strategy_id must be provided for deposit")
    if path.startswith("/withdraw/") and not params.get("strategy_id"):
        return error_response(400, "Strategy id must be provided")
    if path.startswith("/close-user-account/"):
        by_account = bool(params.get("user_account"))
        by_owner = all(params.get(k) for k in ("user_pubkey", "strategy_id", "mint"))
        if not (by_account or by_owner):
            return error_response(400, CLOSE_IDENTITY_MESSAGE)
    return None


# ---- the service ---------------------------------------------------------------------------------

_GET_ROUTES = (
    (re.compile(r"^/health$"), "_health"),
    (re.compile(r"^/strategy-info/([^/]+)/?$"), "_strategy_info"),
    (re.compile(r"^/breeze-balances/([^/]+)$"), "_breeze_balances"),
    (re.compile(r"^/user-balances/([^/]+)$"), "_user_balances"),
    (re.compile(r"^/user-yield/([^/]+)$"), "_user_yield"),
)


class Service:
    """The sandbox service: one `handle` call per request, safe to call from many threads."""

    def __init__(
        self,
        ledger: Ledger,
        api_key: str,
        *,
        latency_ms: int = 0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.ledger = ledger
        self.api_key = api_key
        self.latency_ms = latency_ms
        self.sleep = sleep
        self.faults = Faults()
        # The hook for the write side: path -> handler(params) -> Response. Bodies reach a handler
        # only after the documented checks (strategy id, close-account identity) passed.
        self.post_handlers: dict[str, PostHandler] = {}

    def add_fault(self, method: str, path_regex: str, status: int, body: bytes | str = b"", **kw: Any) -> Fault:
        return self.faults.add(method, path_regex, status, body, **kw)

    def handle(
        self,
        method: str,
        path: str,
        query: str = "",
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
    ) -> Response:
        if "?" in path:
            path, _, extra = path.partition("?")
            query = f"{query}&{extra}" if query else extra
        method = method.upper()
        if self.latency_ms > 0:
            # Sleeps in the calling thread only: the threaded server keeps answering others.
            self.sleep(self.latency_ms / 1000)
        fault = self.faults.take(method, path)
        if fault is not None:
            if fault.delay_s > 0:
                self.sleep(fault.delay_s)
            return Response(
                fault.status, fault.content_type, fault.body, dict(fault.headers), disconnect=fault.disconnect
            )
        lowered = {k.lower(): v for k, v in (headers or {}).items()}
        try:
            denied = self._authenticate(lowered)
            if denied is not None:
                return denied
            if method not in SERVED_METHODS:
                # TRACE, QUERY, ...: refused after authentication, as the real service does.
                return error_response(405, f"Method {method} not allowed", {"Allow": "GET, HEAD, POST"})
            return self._route(method, path, query, lowered, body)
        except BadRequest as exc:
            return exc.response
        except Exception:  # noqa: BLE001 - a bug must answer 500, like the real service, not kill the server
            return error_response(500, INTERNAL_ERROR)

    def _authenticate(self, headers: Mapping[str, str]) -> Response | None:
        key = headers.get("x-api-key")
        if not key:
            return error_response(401, MISSING_CREDENTIALS)
        if not hmac.compare_digest(key.encode(), self.api_key.encode()):
            return error_response(401, INVALID_KEY)
        return None

    def _route(self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes) -> Response:
        for pattern, name in _GET_ROUTES:
            m = pattern.match(path)
            if m:
                if method not in ("GET", "HEAD"):
                    return error_response(405, f"Method {method} not allowed on {path}", {"Allow": "GET"})
                endpoint: Callable[..., Response] = getattr(self, name)  # a GET endpoint method of this class
                return endpoint(*(unquote(g) for g in m.groups()), query=query)
        if path in POST_FIELDS:
            if method != "POST":
                return error_response(405, f"Method {method} not allowed on {path}", {"Allow": "POST"})
            return self._post(path, headers, body)
        return error_response(404, f"Not found: {method} {path}")

    # -- GET

    def _health(self, *, query: str) -> Response:
        return json_response(200, "OK")

    def _strategy_info(self, strategy_id: str, *, query: str) -> Response:
        strategy = self.ledger.strategy(strategy_id)
        if strategy is None:
            return error_response(404, STRATEGY_NOT_FOUND)
        return json_response(200, strategy)

    def _breeze_balances(self, wallet: str, *, query: str) -> Response:
        try:
            q = parse_query(query, ("strategy_id", "asset", "sort_by", "sort_order", "page", "limit"))
        except QueryError as exc:
            return query_failure(str(exc))
        strategy_id = q.get("strategy_id")
        if not strategy_id:
            return error_response(400, "strategy_id query parameter is required")
        sort_field, descending = sorting(q, "total_position_value", POSITION_SORT_FIELDS)
        _wallet(wallet)
        if self.ledger.strategy(strategy_id) is None:
            return error_response(404, STRATEGY_NOT_FOUND)
        rows = self.ledger.positions(wallet, strategy_id, self._asset(q.get("asset")))
        return json_response(
            200,
            paginate(
                rows, page=q.get("page", 0), limit=q.get("limit", 0), sort_field=sort_field, descending=descending
            ),
        )

    def _user_balances(self, wallet: str, *, query: str) -> Response:
        try:
            q = parse_query(query, ("asset", "sort_by", "sort_order", "page", "limit"))
        except QueryError as exc:
            return query_failure(str(exc))
        sort_field, descending = sorting(q, "total_balance", BALANCE_SORT_FIELDS)
        _wallet(wallet)
        rows = self.ledger.balances(wallet, self._asset(q.get("asset")))
        return json_response(
            200,
            paginate(
                rows, page=q.get("page", 0), limit=q.get("limit", 0), sort_field=sort_field, descending=descending
            ),
        )

    def _user_yield(self, wallet: str, *, query: str) -> Response:
        try:
            q = parse_query(query, ("fund_id", "page", "limit"))
        except QueryError as exc:
            return query_failure(str(exc))
        _wallet(wallet)
        rows = self.ledger.yield_records(wallet, q.get("fund_id") or None)
        return json_response(200, paginate(rows, page=q.get("page", 0), limit=q.get("limit", 0)))

    def _asset(self, value: str | None) -> str | None:
        """An asset filter is a mint address or a token symbol (any case), as the service documents."""
        if not value:
            return None
        return self.ledger.mint_of_symbol(value) or value

    # -- POST

    def _post(self, path: str, headers: Mapping[str, str], body: bytes) -> Response:
        params = _params(path, headers, body)
        documented = _documented_post_errors(path, params)
        if documented is not None:
            return documented
        handler = self.post_handlers.get(path)
        if handler is None:
            return error_response(501, NOT_IMPLEMENTED)
        try:
            return handler(params)
        except LedgerError as exc:
            return error_response(400, str(exc))


__all__ = [
    "JSON",
    "PLAIN_TEXT",
    "POST_FIELDS",
    "Fault",
    "Faults",
    "PostHandler",
    "Response",
    "Service",
    "error_response",
    "json_response",
    "query_failure",
]
