"""`jsonParsed` of SPL Token and Token-2022, as a validator gives it: instructions (the base set here,
Token-2022's extension instructions in `parsed_token_ext` and `parsed_token_confidential`, the token
group and metadata interfaces in `parsed_token_interface`) and accounts (mints and token accounts, with the
Token-2022 extensions they carry)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from solders.pubkey import Pubkey
from solders.token.state import Mint, TokenAccount, TokenAccountState

from yieldcli.sandbox.chain.execution import token_amount_json
from yieldcli.sandbox.rpc import parsed_token_confidential, parsed_token_ext, parsed_token_interface
from yieldcli.solana import programs

Info = dict[str, Any]

AUTHORITY_TYPES = (
    "mintTokens",
    "freezeAccount",
    "accountOwner",
    "closeAccount",
    "transferFeeConfig",
    "withheldWithdraw",
    "closeMint",
    "interestRate",
    "permanentDelegate",
    "confidentialTransferMint",
    "transferHookProgramId",
    "confidentialTransferFeeConfig",
    "metadataPointer",
    "groupPointer",
    "groupMemberPointer",
    "scaledUiAmount",
    "pause",
)
_ACCOUNT_AUTHORITIES = ("accountOwner", "closeAccount")
# Token-2022's ExtensionType, by number, as jsonParsed names an account's extensions: the instructions'
# names but for two (agave's UiExtensionType).
_ACCOUNT_NAMES = {"scaledUiAmount": "scaledUiAmountConfig", "pausable": "pausableConfig"}
EXTENSIONS = tuple(_ACCOUNT_NAMES.get(name, name) for name in parsed_token_ext.EXTENSION_TYPES)


def typed(kind: str, info: Info) -> Info:
    return {"info": info, "type": kind}


def _key(data: bytes, at: int) -> str:
    return str(Pubkey.from_bytes(data[at : at + 32]))


def _coption(data: bytes, at: int) -> str | None:
    """An instruction's COption<Pubkey>: a tag byte, then the key when it is 1."""
    return _key(data, at + 1) if data[at] == 1 else None


def _nonzero(data: bytes, at: int) -> str | None:
    """An extension's OptionalNonZeroPubkey: all zeros is none."""
    raw = data[at : at + 32]
    return None if raw == bytes(32) else str(Pubkey.from_bytes(raw))


def _amount(data: bytes) -> str:
    return str(struct.unpack_from("<Q", data, 1)[0])


def _checked(data: bytes) -> dict[str, Any]:
    (amount,) = struct.unpack_from("<Q", data, 1)
    return token_amount_json(amount, data[9])


def _signed(info: Info, name: str, accounts: list[str], at: int) -> Info:
    """The authority at `at`: a single signer, or a multisig and its signers after it."""
    if len(accounts) > at + 1:
        info["multisig" + name[0].upper() + name[1:]] = accounts[at]
        info["signers"] = accounts[at + 1 :]
    else:
        info[name] = accounts[at]
    return info


def _initialize_mint(a: list[str], data: bytes, rent: bool) -> Info:
    info: Info = {"mint": a[0], "decimals": data[1], "mintAuthority": _key(data, 2)}
    if rent:
        info["rentSysvar"] = a[1]
    freeze = _coption(data, 34)
    if freeze is not None:
        info["freezeAuthority"] = freeze
    return info


def _set_authority(a: list[str], data: bytes) -> Info:
    kind = AUTHORITY_TYPES[data[1]]
    owned = "account" if kind in _ACCOUNT_AUTHORITIES else "mint"
    info: Info = {owned: a[0], "authorityType": kind, "newAuthority": _coption(data, 2)}
    return _signed(info, "authority", a, 1)


def instruction(accounts: list[str], data: bytes) -> Info | None:
    tag, a = data[0], accounts
    simple: dict[int, tuple[str, Callable[[], Info]]] = {
        0: ("initializeMint", lambda: _initialize_mint(a, data, rent=True)),
        1: ("initializeAccount", lambda: {"account": a[0], "mint": a[1], "owner": a[2], "rentSysvar": a[3]}),
        2: ("initializeMultisig", lambda: {"multisig": a[0], "rentSysvar": a[1], "signers": a[2:], "m": data[1]}),
        3: (
            "transfer",
            lambda: _signed({"source": a[0], "destination": a[1], "amount": _amount(data)}, "authority", a, 2),
        ),
        4: ("approve", lambda: _signed({"source": a[0], "delegate": a[1], "amount": _amount(data)}, "owner", a, 2)),
        5: ("revoke", lambda: _signed({"source": a[0]}, "owner", a, 1)),
        6: ("setAuthority", lambda: _set_authority(a, data)),
        7: ("mintTo", lambda: _signed({"mint": a[0], "account": a[1], "amount": _amount(data)}, "mintAuthority", a, 2)),
        8: ("burn", lambda: _signed({"account": a[0], "mint": a[1], "amount": _amount(data)}, "authority", a, 2)),
        9: ("closeAccount", lambda: _signed({"account": a[0], "destination": a[1]}, "owner", a, 2)),
        10: ("freezeAccount", lambda: _signed({"account": a[0], "mint": a[1]}, "freezeAuthority", a, 2)),
        11: ("thawAccount", lambda: _signed({"account": a[0], "mint": a[1]}, "freezeAuthority", a, 2)),
        12: (
            "transferChecked",
            lambda: _signed(
                {"source": a[0], "mint": a[1], "destination": a[2], "tokenAmount": _checked(data)}, "authority", a, 3
            ),
        ),
        13: (
            "approveChecked",
            lambda: _signed(
                {"source": a[0], "mint": a[1], "delegate": a[2], "tokenAmount": _checked(data)}, "owner", a, 3
            ),
        ),
        14: (
            "mintToChecked",
            lambda: _signed({"mint": a[0], "account": a[1], "tokenAmount": _checked(data)}, "mintAuthority", a, 2),
        ),
        15: (
            "burnChecked",
            lambda: _signed({"account": a[0], "mint": a[1], "tokenAmount": _checked(data)}, "authority", a, 2),
        ),
        16: ("initializeAccount2", lambda: {"account": a[0], "mint": a[1], "owner": _key(data, 1), "rentSysvar": a[2]}),
        17: ("syncNative", lambda: {"account": a[0]}),
        18: ("initializeAccount3", lambda: {"account": a[0], "mint": a[1], "owner": _key(data, 1)}),
        19: ("initializeMultisig2", lambda: {"multisig": a[0], "signers": a[1:], "m": data[1]}),
        20: ("initializeMint2", lambda: _initialize_mint(a, data, rent=False)),
        21: ("getAccountDataSize", lambda: _data_size(a, data)),
        22: ("initializeImmutableOwner", lambda: {"account": a[0]}),
        23: ("amountToUiAmount", lambda: {"mint": a[0], "amount": _amount(data)}),
        24: ("uiAmountToAmount", lambda: {"mint": a[0], "uiAmount": data[1:].decode("utf-8")}),
        25: ("initializeMintCloseAuthority", lambda: {"mint": a[0], "newAuthority": _coption(data, 1)}),
    }
    if tag not in simple:
        if tag in (27, 37):  # confidential transfers and their fees
            found = parsed_token_confidential.instruction(accounts, data)
            return None if found is None else typed(*found)
        # An extension's instruction, else the token group or metadata interface Token-2022 serves.
        parsed = parsed_token_ext.instruction(accounts, data)
        found = None if parsed is not None else parsed_token_interface.instruction(accounts, data)
        return parsed if found is None else typed(*found)
    kind, info = simple[tag]
    return typed(kind, info())


def _data_size(a: list[str], data: bytes) -> Info:
    info: Info = {"mint": a[0]}
    kinds = parsed_token_ext.extension_types(data, 1)
    if kinds:
        info["extensionTypes"] = kinds
    return info


# ---- accounts


def state(data: bytes, mint_decimals: Callable[[str], int | None]) -> Info | None:
    """A mint or token account (with its extensions) as jsonParsed gives it; None if it is neither."""
    size = len(data)
    if size == programs.MINT_SIZE or (size > programs.TOKEN_ACCOUNT_SIZE and data[165] == 1):
        mint = Mint.from_bytes(data[: programs.MINT_SIZE])
        info: Info = {
            "mintAuthority": _optional(mint.mint_authority),
            "supply": str(mint.supply),
            "decimals": mint.decimals,
            "isInitialized": mint.is_initialized,
            "freezeAuthority": _optional(mint.freeze_authority),
        }
        return typed("mint", _with_extensions(info, data))
    if size < programs.TOKEN_ACCOUNT_SIZE or (size > programs.TOKEN_ACCOUNT_SIZE and data[165] != 2):
        return None
    held = TokenAccount.from_bytes(data[: programs.TOKEN_ACCOUNT_SIZE])
    if held.state == TokenAccountState.Uninitialized:
        return None
    decimals = mint_decimals(str(held.mint))
    if decimals is None:
        return None
    info = {
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
    return typed("account", _with_extensions(info, data))


def _with_extensions(info: Info, data: bytes) -> Info:
    """`extensions` after the base state, when the account has any (a validator leaves the key out otherwise)."""
    found = []
    at = programs.TOKEN_ACCOUNT_SIZE + 1
    while at + 4 <= len(data):
        kind, length = struct.unpack_from("<HH", data, at)
        value = data[at + 4 : at + 4 + length]
        at += 4 + length
        if kind == 0:
            break
        found.append(extension(kind, value))
    if found:
        info["extensions"] = found
    return info


def extension(kind: int, v: bytes) -> Info:
    """One TLV extension: its name and, for those parsed here, its state."""
    name = EXTENSIONS[kind] if kind < len(EXTENSIONS) else ""
    states: dict[str, Callable[[], Info]] = {
        "transferFeeConfig": lambda: {
            "transferFeeConfigAuthority": _nonzero(v, 0),
            "withdrawWithheldAuthority": _nonzero(v, 32),
            "withheldAmount": struct.unpack_from("<Q", v, 64)[0],
            "olderTransferFee": _fee(v, 72),
            "newerTransferFee": _fee(v, 90),
        },
        "transferFeeAmount": lambda: {"withheldAmount": struct.unpack_from("<Q", v, 0)[0]},
        "mintCloseAuthority": lambda: {"closeAuthority": _nonzero(v, 0)},
        "defaultAccountState": lambda: {"accountState": ("uninitialized", "initialized", "frozen")[v[0]]},
        "memoTransfer": lambda: {"requireIncomingTransferMemos": bool(v[0])},
        "cpiGuard": lambda: {"lockCpi": bool(v[0])},
        "permanentDelegate": lambda: {"delegate": _nonzero(v, 0)},
        "transferHook": lambda: {"authority": _nonzero(v, 0), "programId": _nonzero(v, 32)},
        "transferHookAccount": lambda: {"transferring": bool(v[0])},
        "metadataPointer": lambda: {"authority": _nonzero(v, 0), "metadataAddress": _nonzero(v, 32)},
        "groupPointer": lambda: {"authority": _nonzero(v, 0), "groupAddress": _nonzero(v, 32)},
        "groupMemberPointer": lambda: {"authority": _nonzero(v, 0), "memberAddress": _nonzero(v, 32)},
        "pausableConfig": lambda: {"authority": _nonzero(v, 0), "paused": bool(v[32])},
    }
    if name in ("immutableOwner", "nonTransferable", "nonTransferableAccount", "pausableAccount"):
        return {"extension": name}
    if name in states:
        try:
            return {"extension": name, "state": states[name]()}
        except (IndexError, struct.error):
            pass
    if name in parsed_token_ext.ACCOUNT_STATES:
        try:
            return {"extension": name, "state": parsed_token_ext.ACCOUNT_STATES[name](v)}
        except (IndexError, struct.error, ValueError):  # UnicodeDecodeError is a ValueError
            pass
    return {"extension": "unparseableExtension"}


def _fee(v: bytes, at: int) -> Info:
    epoch, maximum, basis_points = struct.unpack_from("<QQH", v, at)
    return {"epoch": epoch, "maximumFee": maximum, "transferFeeBasisPoints": basis_points}


def _optional(key: Pubkey | None) -> str | None:
    return None if key is None else str(key)
