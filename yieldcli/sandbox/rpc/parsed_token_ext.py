"""`jsonParsed` of Token-2022's extension instructions (numbers 26 and up), in a validator's shapes
(agave's parse_token/extension): transfer fees, default account state, reallocate, required memos, the
native mint, non-transferable mints, the interest-bearing mint, the CPI guard, permanent delegates,
transfer hooks, excess lamports, the metadata, group and group member pointers, the scaled UI amount
and pausable mints. The confidential transfer and confidential fee instructions are in
`parsed_token_confidential`; the confidential mint-burn ones stay raw (None here)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from solders.pubkey import Pubkey

from yieldcli.sandbox.chain.execution import token_amount_json

Info = dict[str, Any]
Parser = Callable[[list[str], bytes], tuple[str, Info] | None]
_STATES = ("uninitialized", "initialized", "frozen")
# Token-2022's ExtensionType by number, as instructions name them (UiExtensionType: accounts name the
# last ones scaledUiAmountConfig and pausableConfig instead).
EXTENSION_TYPES = (
    "uninitialized",
    "transferFeeConfig",
    "transferFeeAmount",
    "mintCloseAuthority",
    "confidentialTransferMint",
    "confidentialTransferAccount",
    "defaultAccountState",
    "immutableOwner",
    "memoTransfer",
    "nonTransferable",
    "interestBearingConfig",
    "cpiGuard",
    "permanentDelegate",
    "nonTransferableAccount",
    "transferHook",
    "transferHookAccount",
    "confidentialTransferFeeConfig",
    "confidentialTransferFeeAmount",
    "metadataPointer",
    "tokenMetadata",
    "groupPointer",
    "tokenGroup",
    "groupMemberPointer",
    "tokenGroupMember",
    "confidentialMintBurn",
    "scaledUiAmount",
    "pausable",
    "pausableAccount",
)


def extension_types(data: bytes, at: int) -> list[str]:
    """The u16 ExtensionTypes from `at` to the end, named (an unknown number is unparsable)."""
    if (len(data) - at) % 2:
        raise ValueError("odd extension list")
    return [EXTENSION_TYPES[k] for (k,) in struct.iter_unpack("<H", data[at:])]


def key(data: bytes, at: int) -> str:
    raw = data[at : at + 32]
    if len(raw) != 32:
        raise ValueError("short key")
    return str(Pubkey.from_bytes(raw))


def nonzero(data: bytes, at: int) -> str | None:
    """An OptionalNonZeroPubkey: all zeros is none."""
    found = key(data, at)
    return None if data[at : at + 32] == bytes(32) else found


def signed(info: Info, name: str, a: list[str], at: int) -> Info:
    """The authority at `at`: a single signer, or a multisig and its signers after it (parse_signers)."""
    if len(a) > at + 1:
        info["multisig" + name[0].upper() + name[1:]] = a[at]
        info["signers"] = a[at + 1 :]
    else:
        info[name] = a[at]
    return info


def _set(info: Info, **optional: str | None) -> Info:
    """The optional fields a validator adds only when present."""
    info.update({k: v for k, v in optional.items() if v is not None})
    return info


def _transfer_fee(a: list[str], d: bytes) -> tuple[str, Info] | None:
    sub = d[1]
    if sub == 0:
        at, authorities = 2, []
        for _ in range(2):  # two COption<Pubkey>: a tag byte, then the key when it is 1
            authorities.append(key(d, at + 1) if d[at] == 1 else None)
            at += 33 if d[at] == 1 else 1
        points, maximum = struct.unpack_from("<HQ", d, at)
        info = _set(
            {"mint": a[0], "transferFeeBasisPoints": points, "maximumFee": maximum},
            transferFeeConfigAuthority=authorities[0],
            withdrawWithheldAuthority=authorities[1],
        )
        return "initializeTransferFeeConfig", info
    if sub == 1:
        amount, decimals, fee = struct.unpack_from("<QBQ", d, 2)
        info = {
            "source": a[0],
            "mint": a[1],
            "destination": a[2],
            "tokenAmount": token_amount_json(amount, decimals),
            "feeAmount": token_amount_json(fee, decimals),
        }
        return "transferCheckedWithFee", signed(info, "authority", a, 3)
    if sub == 2:
        info = {"mint": a[0], "feeRecipient": a[1]}
        return "withdrawWithheldTokensFromMint", signed(info, "withdrawWithheldAuthority", a, 2)
    if sub == 3:
        count = d[2]
        first = len(a) - count
        info = {"mint": a[0], "feeRecipient": a[1], "sourceAccounts": a[first:]}
        return "withdrawWithheldTokensFromAccounts", signed(info, "withdrawWithheldAuthority", a[:first], 2)
    if sub == 4:
        return "harvestWithheldTokensToMint", {"mint": a[0], "sourceAccounts": a[1:]}
    if sub == 5:
        points, maximum = struct.unpack_from("<HQ", d, 2)
        info = {"mint": a[0], "transferFeeBasisPoints": points, "maximumFee": maximum}
        # "multisigtransferFeeConfigAuthority": the validator's own spelling, lower-case t.
        if len(a) > 2:
            return "setTransferFee", {**info, "multisigtransferFeeConfigAuthority": a[1], "signers": a[2:]}
        return "setTransferFee", {**info, "transferFeeConfigAuthority": a[1]}
    return None


def _default_state(a: list[str], d: bytes) -> tuple[str, Info] | None:
    if len(d) <= 2 or d[1] > 1:
        return None
    info = {"mint": a[0], "accountState": _STATES[d[2]]}
    if d[1] == 0:
        return "initializeDefaultAccountState", info
    return "updateDefaultAccountState", signed(info, "freezeAuthority", a, 1)


def _toggle(noun: str) -> Parser:
    def parse(a: list[str], d: bytes) -> tuple[str, Info] | None:
        if d[1] > 1:
            return None
        return ("enable" if d[1] == 0 else "disable") + noun, signed({"account": a[0]}, "owner", a, 1)

    return parse


def _pointer(noun: str, field: str) -> Parser:
    """The pointer extensions (and the transfer hook): initialize with an authority and an address,
    update the address."""

    def parse(a: list[str], d: bytes) -> tuple[str, Info] | None:
        if d[1] == 0:
            info = _set({"mint": a[0]}, authority=nonzero(d, 2), **{field: nonzero(d, 34)})
            return "initialize" + noun, info
        if d[1] == 1:
            info = _set({"mint": a[0]}, **{field: nonzero(d, 2)})
            return "update" + noun, signed(info, "authority", a, 1)
        return None

    return parse


def _f64(data: bytes, at: int) -> str:
    """An f64 as Rust's Display writes it (agave's `f64::to_string`): shortest, never an exponent."""
    (value,) = struct.unpack_from("<d", data, at)
    text = format(Decimal(repr(value)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _interest_bearing(a: list[str], d: bytes) -> tuple[str, Info] | None:
    if d[1] == 0:
        (rate,) = struct.unpack_from("<h", d, 34)
        return "initializeInterestBearingConfig", {"mint": a[0], "rateAuthority": nonzero(d, 2), "rate": rate}
    if d[1] == 1:
        (rate,) = struct.unpack_from("<h", d, 2)
        return "updateInterestBearingConfigRate", signed({"mint": a[0], "newRate": rate}, "rateAuthority", a, 1)
    return None


def _scaled_ui_amount(a: list[str], d: bytes) -> tuple[str, Info] | None:
    if d[1] == 0:
        info = {"mint": a[0], "authority": nonzero(d, 2), "multiplier": _f64(d, 34)}
        return "initializeScaledUiAmountConfig", info
    if d[1] == 1:
        (timestamp,) = struct.unpack_from("<q", d, 10)
        info = {"mint": a[0], "newMultiplier": _f64(d, 2), "newMultiplierTimestamp": timestamp}
        return "updateMultiplier", signed(info, "authority", a, 1)
    return None


def _pausable(a: list[str], d: bytes) -> tuple[str, Info] | None:
    if d[1] == 0:
        return "initializePausableConfig", {"mint": a[0], "authority": nonzero(d, 2)}
    if d[1] in (1, 2):
        return ("pause" if d[1] == 1 else "resume"), signed({"mint": a[0]}, "authority", a, 1)
    return None


def _reallocate(a: list[str], d: bytes) -> tuple[str, Info]:
    if len(a) < 4:
        raise IndexError("reallocate names four accounts at least")
    info = {"account": a[0], "payer": a[1], "systemProgram": a[2], "extensionTypes": extension_types(d, 1)}
    return "reallocate", signed(info, "owner", a, 3)


_BY_TAG: dict[int, Parser] = {
    26: _transfer_fee,
    28: _default_state,
    29: _reallocate,
    30: _toggle("RequiredMemoTransfers"),
    31: lambda a, d: ("createNativeMint", {"payer": a[0], "nativeMint": a[1], "systemProgram": a[2]}),
    32: lambda a, d: ("initializeNonTransferableMint", {"mint": a[0]}),
    33: _interest_bearing,
    34: _toggle("CpiGuard"),
    35: lambda a, d: ("initializePermanentDelegate", {"mint": a[0], "delegate": key(d, 1)}),
    36: _pointer("TransferHook", "programId"),
    38: lambda a, d: ("withdrawExcessLamports", signed({"source": a[0], "destination": a[1]}, "authority", a, 2)),
    39: _pointer("MetadataPointer", "metadataAddress"),
    40: _pointer("GroupPointer", "groupAddress"),
    41: _pointer("GroupMemberPointer", "memberAddress"),
    43: _scaled_ui_amount,
    44: _pausable,
}


def instruction(accounts: list[str], data: bytes) -> Info | None:
    """An extension instruction as {"info", "type"}, or None when a validator would leave it raw here."""
    parser = _BY_TAG.get(data[0])
    found = None if parser is None else parser(accounts, data)
    return None if found is None else {"info": found[1], "type": found[0]}


def _strings(data: bytes, at: int, count: int) -> tuple[list[str], int]:
    """`count` u32-length-prefixed UTF-8 strings from `at`, and where they end (a short one raises)."""
    found = []
    for _ in range(count):
        (length,) = struct.unpack_from("<I", data, at)
        if at + 4 + length > len(data):
            raise ValueError("short string")
        found.append(data[at + 4 : at + 4 + length].decode("utf-8"))
        at += 4 + length
    return found, at


def _token_metadata(v: bytes) -> Info:
    (name, symbol, uri), at = _strings(v, 64, 3)
    (pairs,) = struct.unpack_from("<I", v, at)
    extra, _ = _strings(v, at + 4, 2 * pairs)
    additional = [[extra[i], extra[i + 1]] for i in range(0, len(extra), 2)]
    return {"updateAuthority": nonzero(v, 0), "mint": key(v, 32), "name": name, "symbol": symbol, "uri": uri,
            "additionalMetadata": additional}  # fmt: skip


# A mint's or account's extension state, for the extensions these parse (agave's `parse_token_extension`);
# the others are in `parsed_token.extension`.
ACCOUNT_STATES: dict[str, Callable[[bytes], Info]] = {
    "interestBearingConfig": lambda v: {
        "rateAuthority": nonzero(v, 0),
        "initializationTimestamp": struct.unpack_from("<q", v, 32)[0],
        "preUpdateAverageRate": struct.unpack_from("<h", v, 40)[0],
        "lastUpdateTimestamp": struct.unpack_from("<q", v, 42)[0],
        "currentRate": struct.unpack_from("<h", v, 50)[0],
    },
    "scaledUiAmountConfig": lambda v: {
        "authority": nonzero(v, 0),
        "multiplier": _f64(v, 32),
        "newMultiplierEffectiveTimestamp": struct.unpack_from("<q", v, 40)[0],
        "newMultiplier": _f64(v, 48),
    },
    "tokenMetadata": _token_metadata,
    "tokenGroup": lambda v: {
        "updateAuthority": nonzero(v, 0),
        "mint": key(v, 32),
        "size": struct.unpack_from("<Q", v, 64)[0],
        "maxSize": struct.unpack_from("<Q", v, 72)[0],
    },
    "tokenGroupMember": lambda v: {
        "mint": key(v, 0),
        "group": key(v, 32),
        "memberNumber": struct.unpack_from("<Q", v, 64)[0],
    },
}
