"""`jsonParsed`: instructions and accounts of the programs a validator parses, in its shapes.

What is parsed: the System program (transfers, account creation, nonces), SPL Token and Token-2022
(`parsed_token`: instructions, mints and token accounts with their extensions), the Associated
Token Account program, Address Lookup Tables (instructions and tables), Memo and the Stake program
(`parsed_stake`: instructions and stake accounts). Anything else is
answered as a validator answers what it cannot parse (the Compute Budget program among them: a
validator leaves it raw too): partially decoded instructions ({programId, accounts, data}) and base64
account data.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from solders.address_lookup_table_account import AddressLookupTable
from solders.pubkey import Pubkey

from yieldcli.addresses import b58encode
from yieldcli.sandbox.rpc import parsed_stake, parsed_token
from yieldcli.sandbox.rpc.parsed_token import typed as _typed
from yieldcli.solana import programs

Info = dict[str, Any]
_U64_MAX = 2**64 - 1


def instruction(program_id: str, accounts: list[str], data: bytes, stack_height: int | None) -> dict[str, Any]:
    """One instruction as `jsonParsed` gives it: parsed when its program is known, else partially decoded."""
    parser = _PARSERS.get(program_id)
    parsed: Any = None
    if parser is not None:
        try:
            parsed = parser(accounts, data)
        except (IndexError, struct.error, UnicodeDecodeError, ValueError):
            parsed = None  # malformed for its program: shown undecoded, as a validator does
    if parsed is None:
        return {"programId": program_id, "accounts": accounts, "data": b58encode(data), "stackHeight": stack_height}
    return {"program": _NAMES[program_id], "programId": program_id, "parsed": parsed, "stackHeight": stack_height}


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
    return _system_more(tag, accounts, data)


def _seed(data: bytes, at: int) -> tuple[str, int]:
    """A bincode string (u64 length, then UTF-8) at `at`, and where the next field starts."""
    (length,) = struct.unpack_from("<Q", data, at)
    return data[at + 8 : at + 8 + length].decode("utf-8"), at + 8 + length


def _system_more(tag: int, a: list[str], data: bytes) -> Info | None:
    def key(at: int) -> str:
        return str(Pubkey.from_bytes(data[at : at + 32]))

    if tag == 3:
        seed, at = _seed(data, 36)
        lamports, space = struct.unpack_from("<QQ", data, at)
        info = {"source": a[0], "newAccount": a[1], "base": key(4), "seed": seed, "lamports": lamports}
        return _typed("createAccountWithSeed", {**info, "space": space, "owner": key(at + 16)})
    if tag == 5:
        (lamports,) = struct.unpack_from("<Q", data, 4)
        names = ("nonceAccount", "destination", "recentBlockhashesSysvar", "rentSysvar", "nonceAuthority")
        return _typed("withdrawFromNonce", {**dict(zip(names, a[:5], strict=True)), "lamports": lamports})
    if tag == 6:
        first = ("nonceAccount", "recentBlockhashesSysvar", "rentSysvar")
        return _typed("initializeNonce", {**dict(zip(first, a[:3], strict=True)), "nonceAuthority": key(4)})
    if tag == 7:
        return _typed("authorizeNonce", {"nonceAccount": a[0], "nonceAuthority": a[1], "newAuthorized": key(4)})
    if tag == 11:
        (lamports,) = struct.unpack_from("<Q", data, 4)
        seed, at = _seed(data, 12)
        info = {"source": a[0], "sourceBase": a[1], "destination": a[2], "lamports": lamports}
        return _typed("transferWithSeed", {**info, "sourceSeed": seed, "sourceOwner": key(at)})
    if tag == 12:
        return _typed("upgradeNonce", {"nonceAccount": a[0]})
    return None


def _lookup_table(a: list[str], data: bytes) -> Info | None:
    (tag,) = struct.unpack_from("<I", data)
    pair = {"lookupTableAccount": a[0], "lookupTableAuthority": a[1]}
    if tag == 0:
        slot, bump = struct.unpack_from("<QB", data, 4)
        info = {**pair, "payerAccount": a[2], "systemProgram": a[3], "recentSlot": slot, "bumpSeed": bump}
        return _typed("createLookupTable", info)
    if tag == 1:
        return _typed("freezeLookupTable", pair)
    if tag == 2:
        (count,) = struct.unpack_from("<Q", data, 4)
        added = [str(Pubkey.from_bytes(data[12 + 32 * i : 44 + 32 * i])) for i in range(count)]
        extra = {"payerAccount": a[2], "systemProgram": a[3]} if len(a) >= 4 else {}
        return _typed("extendLookupTable", {**pair, **extra, "newAddresses": added})
    if tag == 3:
        return _typed("deactivateLookupTable", pair)
    if tag == 4:
        return _typed("closeLookupTable", {**pair, "recipient": a[2]})
    return None


def _associated(accounts: list[str], data: bytes) -> Info | None:
    if data == b"\x02":
        nested = ("nestedSource", "nestedMint", "destination", "nestedOwner", "ownerMint", "wallet", "tokenProgram")
        return _typed("recoverNested", dict(zip(nested, accounts[:7], strict=True)))
    kind = {b"": "create", b"\x00": "create", b"\x01": "createIdempotent"}.get(data)
    if kind is None:
        return None
    names = ("source", "account", "wallet", "mint", "systemProgram", "tokenProgram")
    return _typed(kind, dict(zip(names, accounts[:6], strict=True)))


def _memo(accounts: list[str], data: bytes) -> str:
    return data.decode("utf-8")


MEMO_V1 = "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo"
_PARSERS: dict[str, Callable[[list[str], bytes], Any]] = {
    programs.SYSTEM_PROGRAM: _system,
    programs.TOKEN_PROGRAM: parsed_token.instruction,
    programs.TOKEN_2022_PROGRAM: parsed_token.instruction,
    programs.ASSOCIATED_TOKEN_PROGRAM: _associated,
    programs.MEMO_PROGRAM: _memo,
    MEMO_V1: _memo,
    programs.ADDRESS_LOOKUP_TABLE_PROGRAM: _lookup_table,
    parsed_stake.STAKE_PROGRAM: parsed_stake.instruction,
}
_NAMES = {
    programs.SYSTEM_PROGRAM: "system",
    programs.TOKEN_PROGRAM: "spl-token",
    programs.TOKEN_2022_PROGRAM: "spl-token-2022",
    programs.ASSOCIATED_TOKEN_PROGRAM: "spl-associated-token-account",
    programs.MEMO_PROGRAM: "spl-memo",
    MEMO_V1: "spl-memo",
    programs.ADDRESS_LOOKUP_TABLE_PROGRAM: "address-lookup-table",
    parsed_stake.STAKE_PROGRAM: "stake",
}

# ---- accounts


def account(owner: str, data: bytes, mint_decimals: Callable[[str], int | None]) -> dict[str, Any] | None:
    """An account's `data` under `jsonParsed`, or None when a validator would fall back to base64."""
    if owner in programs.TOKEN_PROGRAMS:
        parsed, name = parsed_token.state(data, mint_decimals), _NAMES[owner]
    elif owner == programs.SYSTEM_PROGRAM and len(data) == 80:
        parsed, name = _nonce(data), "nonce"
    elif owner == programs.ADDRESS_LOOKUP_TABLE_PROGRAM:
        parsed, name = _table(data), "address-lookup-table"
    elif owner == parsed_stake.STAKE_PROGRAM:
        parsed, name = parsed_stake.account(data), "stake"
    else:
        return None
    return None if parsed is None else {"program": name, "parsed": parsed, "space": len(data)}


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


def _table(data: bytes) -> Info | None:
    try:
        table = AddressLookupTable.deserialize(data)
    except BaseException as exc:  # pyo3 panics are BaseExceptions
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return None
    meta = table.meta
    info: Info = {
        "deactivationSlot": str(meta.deactivation_slot),
        "lastExtendedSlot": str(meta.last_extended_slot),
        "lastExtendedSlotStartIndex": meta.last_extended_slot_start_index,
    }
    if meta.authority is not None:
        info["authority"] = str(meta.authority)
    info["addresses"] = [str(k) for k in table.addresses]
    return _typed("lookupTable", info)
