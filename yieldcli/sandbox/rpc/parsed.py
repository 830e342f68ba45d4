"""`jsonParsed`: instructions and accounts of the programs a validator parses, in its shapes.

What is parsed here: the System program (transfers, account creation, nonces), SPL Token and
Token-2022 (the base instructions and account layouts), the Associated Token Account program and
Memo. Anything else is answered as a validator answers what it cannot parse: partially decoded
instructions ({programId, accounts, data}) and base64 account data.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from solders.pubkey import Pubkey
from solders.token.state import Mint, TokenAccount, TokenAccountState

from yieldcli.addresses import b58encode
from yieldcli.sandbox.chain.execution import token_amount_json
from yieldcli.solana import programs

Info = dict[str, Any]


def instruction(program_id: str, accounts: list[str], data: bytes, stack_height: int | None) -> dict[str, Any]:
    """One instruction as `jsonParsed` gives it: parsed when its program is known, else partially decoded."""
    parser = _PARSERS.get(program_id)
    parsed: Any = None
    if parser is not None:
        try:
            parsed = parser(accounts, data)
        except (IndexError, struct.error, UnicodeDecodeError):
            parsed = None  # malformed for its program: shown undecoded, as a validator does
    if parsed is None:
        return {"programId": program_id, "accounts": accounts, "data": b58encode(data), "stackHeight": stack_height}
    return {"program": _NAMES[program_id], "programId": program_id, "parsed": parsed, "stackHeight": stack_height}


def _typed(kind: str, info: Info) -> Info:
    return {"info": info, "type": kind}


def _system(accounts: list[str], data: bytes) -> Info | None:
    (tag,) = struct.unpack_from("<I", data)
    if tag == 0:
        lamports, space = struct.unpack_from("<QQ", data, 4)
        owner = str(Pubkey.from_bytes(data[20:52]))
        return _typed(
            "createAccount",
            {"source": accounts[0], "newAccount": accounts[1], "lamports": lamports, "space": space, "owner": owner},
        )
    if tag == 1:
        return _typed("assign", {"account": accounts[0], "owner": str(Pubkey.from_bytes(data[4:36]))})
    if tag == 2:
        (lamports,) = struct.unpack_from("<Q", data, 4)
        return _typed("transfer", {"source": accounts[0], "destination": accounts[1], "lamports": lamports})
    if tag == 4:
        return _typed(
            "advanceNonce",
            {"nonceAccount": accounts[0], "recentBlockhashesSysvar": accounts[1], "nonceAuthority": accounts[2]},
        )
    if tag == 8:
        (space,) = struct.unpack_from("<Q", data, 4)
        return _typed("allocate", {"account": accounts[0], "space": space})
    return None


def _amount(data: bytes) -> str:
    return str(struct.unpack_from("<Q", data, 1)[0])


def _checked(data: bytes) -> dict[str, Any]:
    (amount,) = struct.unpack_from("<Q", data, 1)
    return token_amount_json(amount, data[9])


def _token(accounts: list[str], data: bytes) -> Info | None:
    tag, a = data[0], accounts
    simple: dict[int, tuple[str, Callable[[], Info]]] = {
        1: ("initializeAccount", lambda: {"account": a[0], "mint": a[1], "owner": a[2], "rentSysvar": a[3]}),
        3: ("transfer", lambda: {"source": a[0], "destination": a[1], "authority": a[2], "amount": _amount(data)}),
        4: ("approve", lambda: {"source": a[0], "delegate": a[1], "owner": a[2], "amount": _amount(data)}),
        5: ("revoke", lambda: {"source": a[0], "owner": a[1]}),
        7: ("mintTo", lambda: {"mint": a[0], "account": a[1], "mintAuthority": a[2], "amount": _amount(data)}),
        8: ("burn", lambda: {"account": a[0], "mint": a[1], "authority": a[2], "amount": _amount(data)}),
        9: ("closeAccount", lambda: {"account": a[0], "destination": a[1], "owner": a[2]}),
        12: (
            "transferChecked",
            lambda: {
                "source": a[0],
                "mint": a[1],
                "destination": a[2],
                "authority": a[3],
                "tokenAmount": _checked(data),
            },
        ),
        13: (
            "approveChecked",
            lambda: {"source": a[0], "mint": a[1], "delegate": a[2], "owner": a[3], "tokenAmount": _checked(data)},
        ),
        14: (
            "mintToChecked",
            lambda: {"mint": a[0], "account": a[1], "mintAuthority": a[2], "tokenAmount": _checked(data)},
        ),
        15: ("burnChecked", lambda: {"account": a[0], "mint": a[1], "authority": a[2], "tokenAmount": _checked(data)}),
        16: (
            "initializeAccount2",
            lambda: {"account": a[0], "mint": a[1], "owner": str(Pubkey.from_bytes(data[1:33])), "rentSysvar": a[2]},
        ),
        17: ("syncNative", lambda: {"account": a[0]}),
        18: (
            "initializeAccount3",
            lambda: {"account": a[0], "mint": a[1], "owner": str(Pubkey.from_bytes(data[1:33]))},
        ),
    }
    if tag not in simple:
        return None
    kind, info = simple[tag]
    return _typed(kind, info())


def _associated(accounts: list[str], data: bytes) -> Info | None:
    kind = {b"": "create", b"\x00": "create", b"\x01": "createIdempotent"}.get(data)
    if kind is None:
        return None
    names = ("source", "account", "wallet", "mint", "systemProgram", "tokenProgram")
    return _typed(kind, dict(zip(names, accounts[:6], strict=True)))


def _memo(accounts: list[str], data: bytes) -> str:
    return data.decode("utf-8")


_PARSERS: dict[str, Callable[[list[str], bytes], Any]] = {
    programs.SYSTEM_PROGRAM: _system,
    programs.TOKEN_PROGRAM: _token,
    programs.TOKEN_2022_PROGRAM: _token,
    programs.ASSOCIATED_TOKEN_PROGRAM: _associated,
    programs.MEMO_PROGRAM: _memo,
}
_NAMES = {
    programs.SYSTEM_PROGRAM: "system",
    programs.TOKEN_PROGRAM: "spl-token",
    programs.TOKEN_2022_PROGRAM: "spl-token-2022",
    programs.ASSOCIATED_TOKEN_PROGRAM: "spl-associated-token-account",
    programs.MEMO_PROGRAM: "spl-memo",
}

# ---- accounts


def account(owner: str, data: bytes, mint_decimals: Callable[[str], int | None]) -> dict[str, Any] | None:
    """An account's `data` under `jsonParsed`, or None when a validator would fall back to base64."""
    if owner in programs.TOKEN_PROGRAMS:
        parsed, name = _token_state(data, mint_decimals), _NAMES[owner]
    elif owner == programs.SYSTEM_PROGRAM and len(data) == 80:
        parsed, name = _nonce(data), "nonce"
    else:
        return None
    return None if parsed is None else {"program": name, "parsed": parsed, "space": len(data)}


def _token_state(data: bytes, mint_decimals: Callable[[str], int | None]) -> Info | None:
    if len(data) == programs.MINT_SIZE or (len(data) > programs.TOKEN_ACCOUNT_SIZE and data[165:166] == b"\x01"):
        mint = Mint.from_bytes(data[: programs.MINT_SIZE])
        return _typed(
            "mint",
            {
                "mintAuthority": _optional(mint.mint_authority),
                "supply": str(mint.supply),
                "decimals": mint.decimals,
                "isInitialized": mint.is_initialized,
                "freezeAuthority": _optional(mint.freeze_authority),
            },
        )
    if len(data) < programs.TOKEN_ACCOUNT_SIZE:
        return None
    held = TokenAccount.from_bytes(data[: programs.TOKEN_ACCOUNT_SIZE])
    if held.state == TokenAccountState.Uninitialized:
        return None
    decimals = mint_decimals(str(held.mint))
    if decimals is None:
        return None
    info: Info = {
        "isNative": held.is_native is not None,
        "mint": str(held.mint),
        "owner": str(held.owner),
        "state": "frozen" if held.state == TokenAccountState.Frozen else "initialized",
        "tokenAmount": token_amount_json(held.amount, decimals),
    }
    if held.delegate is not None:
        info["delegate"] = str(held.delegate)
        info["delegatedAmount"] = token_amount_json(held.delegated_amount, decimals)
    if held.is_native is not None:
        info["rentExemptReserve"] = token_amount_json(held.is_native, decimals)
    if held.close_authority is not None:
        info["closeAuthority"] = str(held.close_authority)
    return _typed("account", info)


def _nonce(data: bytes) -> Info | None:
    _version, state = struct.unpack_from("<II", data)
    if state != 1:
        return None
    (fee,) = struct.unpack_from("<Q", data, 72)
    return _typed(
        "initialized",
        {
            "authority": str(Pubkey.from_bytes(data[8:40])),
            "blockhash": b58encode(data[40:72]),
            "feeCalculator": {"lamportsPerSignature": str(fee)},
        },
    )


def _optional(key: Pubkey | None) -> str | None:
    return None if key is None else str(key)
