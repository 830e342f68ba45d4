"""The JSON-RPC methods that search accounts: by program (with filters), and token accounts and mints."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from solders.account import Account
from solders.pubkey import Pubkey
from solders.token.state import Mint, TokenAccount

from yieldcli.addresses import b58decode
from yieldcli.sandbox.chain.execution import token_amount_json
from yieldcli.sandbox.rpc.encoding import account_json
from yieldcli.sandbox.rpc.params import Answering, Invalid, account_commitment, options, param, pubkey
from yieldcli.solana import programs

MAX_FILTERS = 4
MAX_MEMCMP_BYTES = 128
LARGEST = 20


def _memcmp(given: Any) -> tuple[int, bytes]:
    if not isinstance(given, dict) or type(given.get("offset")) is not int or not isinstance(given.get("bytes"), str):
        raise Invalid("Invalid params: memcmp takes {offset, bytes}")
    encoding = given.get("encoding", "base58")
    try:
        if encoding == "base58":
            wanted = b58decode(given["bytes"])
        elif encoding == "base64":
            wanted = base64.b64decode(given["bytes"], validate=True)
        else:
            raise Invalid(f"Invalid params: unknown variant `{encoding}`, expected `base58` or `base64`")
    except ValueError:
        raise Invalid(f"Invalid param: memcmp bytes are not {encoding}") from None
    if len(wanted) > MAX_MEMCMP_BYTES:
        raise Invalid(f"Invalid param: memcmp encoded bytes are too long (max {MAX_MEMCMP_BYTES} bytes)")
    return given["offset"], wanted


Test = Callable[[str, bytes], bool]  # (owner program, data) -> kept


def _data_size(size: int) -> Test:
    return lambda owner, data: len(data) == size


def _bytes_at(offset: int, wanted: bytes) -> Test:
    return lambda owner, data: data[offset : offset + len(wanted)] == wanted


def _is_token_account(owner: str, data: bytes) -> bool:
    if owner not in programs.TOKEN_PROGRAMS or len(data) < programs.TOKEN_ACCOUNT_SIZE:
        return False
    return len(data) == programs.TOKEN_ACCOUNT_SIZE or data[165:166] == b"\x02"


def matcher(filters: Any) -> Test:
    """getProgramAccounts' filters (dataSize, memcmp, tokenAccountState) as one test, all of them to pass."""
    if filters is None:
        filters = []
    if not isinstance(filters, list):
        raise Invalid("Invalid params: filters must be an array")
    if len(filters) > MAX_FILTERS:
        raise Invalid(f"Too many filters provided; max {MAX_FILTERS}")
    tests: list[Test] = []
    for f in filters:
        if isinstance(f, dict) and type(f.get("dataSize")) is int:
            tests.append(_data_size(f["dataSize"]))
        elif isinstance(f, dict) and "memcmp" in f:
            tests.append(_bytes_at(*_memcmp(f["memcmp"])))
        elif isinstance(f, dict) and "tokenAccountState" in f:
            tests.append(_is_token_account)
        else:
            raise Invalid(f"Invalid params: unknown filter {f!r}")
    return lambda owner, data: all(t(owner, data) for t in tests)


class AccountSearches(Answering):
    def _keyed(self, found: list[tuple[Pubkey, Account]], config: dict[str, Any]) -> list[dict[str, Any]]:
        encoding = config.get("encoding", "binary")
        return [
            {"pubkey": str(k), "account": account_json(a, encoding, config.get("dataSlice"), self._decimals)}
            for k, a in found
        ]

    def _get_program_accounts(self, params: list[Any]) -> Any:
        program = pubkey(param(params, 0))
        config = options(params, 1)
        test = matcher(config.get("filters"))
        slot, held = self.runtime.program_accounts_at(program, account_commitment())
        found = [(k, a) for k, a in held if test(str(program), bytes(a.data))]
        found = [(k, a) for k, a in found if a.lamports or a.data]
        answer = self._keyed(found, config)
        return self._context_at(slot, answer) if config.get("withContext") else answer

    def _token_accounts(self, params: list[Any], role: str) -> dict[str, Any]:
        wanted = str(pubkey(param(params, 0)))
        selector = param(params, 1)
        config = options(params, 2)
        if not isinstance(selector, dict) or not ({"mint", "programId"} & selector.keys()):
            raise Invalid('Invalid params: give {"mint": ...} or {"programId": ...}')
        mint = selector.get("mint")
        if mint is not None:
            mint_account = self.runtime.get_account(pubkey(mint))
            if mint_account is None or str(mint_account.owner) not in programs.TOKEN_PROGRAMS:
                raise Invalid("Invalid param: could not find mint")
            program = str(mint_account.owner)
        else:
            program = str(selector["programId"])
            if program not in programs.TOKEN_PROGRAMS:
                raise Invalid("Invalid params: unrecognized Token program id")
        found = []
        slot, held_by_program = self.runtime.program_accounts_at(Pubkey.from_string(program), account_commitment())
        for address, account in held_by_program:
            data = bytes(account.data)
            if not _is_token_account(program, data):
                continue
            held = TokenAccount.from_bytes(data[: programs.TOKEN_ACCOUNT_SIZE])
            who = held.owner if role == "owner" else held.delegate
            if str(who) == wanted and (mint is None or str(held.mint) == mint):
                found.append((address, account))
        return self._context_at(slot, self._keyed(found, {"encoding": "base64", **config}))

    def _get_token_accounts_by_owner(self, params: list[Any]) -> dict[str, Any]:
        return self._token_accounts(params, "owner")

    def _get_token_accounts_by_delegate(self, params: list[Any]) -> dict[str, Any]:
        return self._token_accounts(params, "delegate")

    def _mint(self, value: Any) -> tuple[Pubkey, Mint, int]:
        """(address, mint, the slot it was read at)."""
        address = pubkey(value)
        slot, account = self.runtime.account_at(address, account_commitment())
        data = bytes(account.data) if account is not None else b""
        if account is None or str(account.owner) not in programs.TOKEN_PROGRAMS or len(data) < programs.MINT_SIZE:
            raise Invalid("Invalid param: not a Token mint")
        return address, Mint.from_bytes(data[: programs.MINT_SIZE]), slot

    def _get_token_supply(self, params: list[Any]) -> dict[str, Any]:
        _, mint, slot = self._mint(param(params, 0))
        return self._context_at(slot, token_amount_json(mint.supply, mint.decimals))

    def _get_token_largest_accounts(self, params: list[Any]) -> dict[str, Any]:
        address, mint, _ = self._mint(param(params, 0))
        held = []
        program = self.runtime.get_account(address)
        assert program is not None
        slot, accounts = self.runtime.program_accounts_at(program.owner, account_commitment())
        for key, account in accounts:
            parsed = programs.parse_token_account(str(account.owner), bytes(account.data))
            if parsed is not None and parsed[0] == str(address):
                held.append((parsed[2], str(key)))
        held.sort(key=lambda h: (-h[0], h[1]))
        return self._context_at(
            slot, [{"address": key, **token_amount_json(amount, mint.decimals)} for amount, key in held[:LARGEST]]
        )
