"""The Token and Token-2022 programs: transfers, approvals, authorities, closing accounts."""

from __future__ import annotations

import struct
from typing import Any

from yieldcli.chain.tx.decoders.common import DecodeContext, Decoded, coption_pubkey, pubkey_at
from yieldcli.solana import programs

_TOKEN_KINDS: dict[int, tuple[str, tuple[str, ...]]] = {
    0: ("initializeMint", ("mint", "rentSysvar")),
    1: ("initializeAccount", ("account", "mint", "owner", "rentSysvar")),
    2: ("initializeMultisig", ()),
    3: ("transfer", ("source", "destination", "authority")),
    4: ("approve", ("source", "delegate", "owner")),
    5: ("revoke", ("source", "owner")),
    6: ("setAuthority", ("account", "currentAuthority")),
    7: ("mintTo", ("mint", "account", "mintAuthority")),
    8: ("burn", ("account", "mint", "authority")),
    9: ("closeAccount", ("account", "destination", "owner")),
    10: ("freezeAccount", ("account", "mint", "freezeAuthority")),
    11: ("thawAccount", ("account", "mint", "freezeAuthority")),
    12: ("transferChecked", ("source", "mint", "destination", "authority")),
    13: ("approveChecked", ("source", "mint", "delegate", "owner")),
    14: ("mintToChecked", ("mint", "account", "mintAuthority")),
    15: ("burnChecked", ("account", "mint", "authority")),
    16: ("initializeAccount2", ("account", "mint", "rentSysvar")),
    17: ("syncNative", ("account",)),
    18: ("initializeAccount3", ("account", "mint")),
    19: ("initializeMultisig2", ()),
    20: ("initializeMint2", ("mint",)),
    21: ("getAccountDataSize", ("mint",)),
    22: ("initializeImmutableOwner", ("account",)),
    23: ("amountToUiAmount", ("mint",)),
    24: ("uiAmountToAmount", ("mint",)),
}

# Token-2022's own instructions (tags after UiAmountToAmount): named, their data (an extension's own
# sub-instruction, often) not decoded; the guard allows none of them on the user's accounts.
_TOKEN_2022_KINDS = {
    25: "initializeMintCloseAuthority",
    26: "transferFeeExtension",
    27: "confidentialTransferExtension",
    28: "defaultAccountStateExtension",
    29: "reallocate",
    30: "memoTransferExtension",
    31: "createNativeMint",
    32: "initializeNonTransferableMint",
    33: "interestBearingMintExtension",
    34: "cpiGuardExtension",
    35: "initializePermanentDelegate",
    36: "transferHookExtension",
    37: "confidentialTransferFeeExtension",
    38: "withdrawExcessLamports",
    39: "metadataPointerExtension",
    40: "groupPointerExtension",
    41: "groupMemberPointerExtension",
    42: "confidentialMintBurnExtension",
    43: "scaledUiAmountExtension",
    44: "pausableExtension",
}

_AUTHORITY_TYPES = ("mintTokens", "freezeAccount", "accountOwner", "closeAccount")


def decode_token(data: bytes, accts: list[str | None], ctx: DecodeContext, program_id: str) -> Decoded:
    tag = data[0]
    if tag not in _TOKEN_KINDS:
        # Token-2022 extensions: named; anything newer by its tag only.
        if program_id == programs.TOKEN_2022_PROGRAM:
            return _TOKEN_2022_KINDS.get(tag, f"instruction {tag}"), {}, ()
        raise ValueError(tag)
    kind, roles = _TOKEN_KINDS[tag]
    role = {name: accts[i] if i < len(accts) else None for i, name in enumerate(roles)}
    details: dict[str, Any] = {name: role[name] for name in roles if not name.endswith("Sysvar")}
    if tag in (3, 4, 7, 8):
        (amount,) = struct.unpack_from("<Q", data, 1)
        mint = role.get("mint")
        account = role.get("source") or role.get("account")
        ctx.amount(details, amount, mint=mint, account=None if mint else account)
    elif tag in (12, 13, 14, 15):
        amount, decimals = struct.unpack_from("<QB", data, 1)
        ctx.amount(details, amount, mint=role.get("mint"), decimals=decimals)
    elif tag in (0, 20):
        decimals = data[1]
        mint_authority = pubkey_at(data, 2)
        freeze, _ = coption_pubkey(data, 34)
        details.update(decimals=decimals, mintAuthority=mint_authority, freezeAuthority=freeze)
    elif tag in (16, 18):
        details["owner"] = pubkey_at(data, 1)
    elif tag == 6:
        authority_type = data[1]
        new, _ = coption_pubkey(data, 2)
        details.update(
            authorityType=_AUTHORITY_TYPES[authority_type]
            if authority_type < len(_AUTHORITY_TYPES)
            else authority_type,
            newAuthority=new,
        )
    elif len(data) != 1 and tag in (1, 5, 9, 10, 11, 17):
        raise ValueError("unexpected data")
    return kind, details, roles
