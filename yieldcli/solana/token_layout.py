"""The SPL Token and Token-2022 programs' accounts: token accounts, and mints (owning program, decimals,
authorities, extensions).

A Token-2022 mint is SPL Token's 82-byte mint, optionally followed by padding up to a token account's
165 bytes, an account-type byte (1: mint) and extensions as type-length-value entries (u16 type, u16
length, value). A Token-2022 token account is the 165-byte SPL Token account, optionally followed by
its account-type byte (2: account) and its own extensions. Which program owns a mint is a chain fact
(the mint account's owner): the associated token account of a wallet is derived with it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from solders.pubkey import Pubkey

TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"
TOKEN_PROGRAMS = (TOKEN_PROGRAM, TOKEN_2022_PROGRAM)
TOKEN_ACCOUNT_SIZE = 165
MINT_SIZE = 82
ACCOUNT_TYPE_MINT = 1
ACCOUNT_TYPE_ACCOUNT = 2

# Token-2022's extension types (spl-token-2022 `ExtensionType`), by number.
EXTENSION_NAMES = {
    1: "TransferFeeConfig",
    2: "TransferFeeAmount",
    3: "MintCloseAuthority",
    4: "ConfidentialTransferMint",
    5: "ConfidentialTransferAccount",
    6: "DefaultAccountState",
    7: "ImmutableOwner",
    8: "MemoTransfer",
    9: "NonTransferable",
    10: "InterestBearingConfig",
    11: "CpiGuard",
    12: "PermanentDelegate",
    13: "NonTransferableAccount",
    14: "TransferHook",
    15: "TransferHookAccount",
    16: "ConfidentialTransferFeeConfig",
    17: "ConfidentialTransferFeeAmount",
    18: "MetadataPointer",
    19: "TokenMetadata",
    20: "GroupPointer",
    21: "TokenGroup",
    22: "GroupMemberPointer",
    23: "TokenGroupMember",
    24: "ConfidentialMintBurn",
    25: "ScaledUiAmount",
    26: "Pausable",
    27: "PausableAccount",
}
TRANSFER_FEE_CONFIG = 1
TRANSFER_FEE_AMOUNT = 2
DEFAULT_ACCOUNT_STATE = 6
NON_TRANSFERABLE = 9
PERMANENT_DELEGATE = 12
TRANSFER_HOOK = 14
TRANSFER_HOOK_ACCOUNT = 15
METADATA_POINTER = 18
PAUSABLE = 26
ACCOUNT_STATE_FROZEN = 2  # DefaultAccountState's value: 0 uninitialized, 1 initialized, 2 frozen


@dataclass(frozen=True)
class MintInfo:
    """A mint as its account holds it; `extensions` maps a Token-2022 extension type to its value."""

    program: str
    decimals: int
    mint_authority: str | None
    freeze_authority: str | None
    extensions: dict[int, bytes] = field(default_factory=dict)


def parse_token_account(owner_program: str, data: bytes) -> tuple[str, str, int] | None:
    """(mint, owner, amount) of an SPL Token or Token-2022 account, else None."""
    if owner_program == TOKEN_PROGRAM:
        if len(data) != TOKEN_ACCOUNT_SIZE:
            return None
    elif owner_program != TOKEN_2022_PROGRAM or extensions(data, ACCOUNT_TYPE_ACCOUNT) is None:
        return None  # another program's account, or a Token-2022 mint
    elif len(data) < TOKEN_ACCOUNT_SIZE:
        return None
    (amount,) = struct.unpack_from("<Q", data, 64)
    return str(Pubkey.from_bytes(data[0:32])), str(Pubkey.from_bytes(data[32:64])), amount


def parse_mint_decimals(owner_program: str, data: bytes) -> int | None:
    mint = parse_mint(owner_program, data)
    return mint.decimals if mint is not None else None


def _option_key(data: bytes, offset: int) -> str | None:
    """A COption<Pubkey>: a u32 tag, then the key."""
    (tag,) = struct.unpack_from("<I", data, offset)
    return str(Pubkey.from_bytes(data[offset + 4 : offset + 36])) if tag else None


def extensions(data: bytes, account_type: int) -> dict[int, bytes] | None:
    """The Token-2022 extensions after a base layout, or None when the bytes are not such an account."""
    if len(data) <= TOKEN_ACCOUNT_SIZE:
        return {}
    if data[TOKEN_ACCOUNT_SIZE] != account_type:
        return None
    if account_type == ACCOUNT_TYPE_MINT and any(data[MINT_SIZE:TOKEN_ACCOUNT_SIZE]):
        return None  # a mint's padding is zero
    found: dict[int, bytes] = {}
    at = TOKEN_ACCOUNT_SIZE + 1
    while at + 4 <= len(data):
        kind, length = struct.unpack_from("<HH", data, at)
        if kind == 0:
            break  # uninitialized space: the end of the entries
        if at + 4 + length > len(data) or kind in found:
            return None
        found[kind] = data[at + 4 : at + 4 + length]
        at += 4 + length
    return found


def parse_mint(owner_program: str, data: bytes) -> MintInfo | None:
    """The mint an account holds, for SPL Token (82 bytes) or Token-2022 (82 bytes, or with extensions)."""
    if owner_program == TOKEN_PROGRAM:
        found: dict[int, bytes] | None = {} if len(data) == MINT_SIZE else None
    elif owner_program == TOKEN_2022_PROGRAM:
        found = {} if len(data) == MINT_SIZE else extensions(data, ACCOUNT_TYPE_MINT)
        if len(data) < TOKEN_ACCOUNT_SIZE + 1 and len(data) != MINT_SIZE:
            found = None  # neither the bare base nor base + account type: a token account, or nothing
    else:
        found = None
    if found is None or not data[45]:  # is_initialized
        return None
    return MintInfo(owner_program, data[44], _option_key(data, 0), _option_key(data, 46), found)


def extension_key(value: bytes, offset: int = 0) -> str | None:
    """An OptionalNonZeroPubkey inside an extension: 32 zero bytes mean none."""
    raw = value[offset : offset + 32]
    return str(Pubkey.from_bytes(raw)) if len(raw) == 32 and any(raw) else None


def issuer_rules(mint: MintInfo) -> list[str]:
    """The asset's own rules that are its issuer's, shown with every review and never refused: a
    permanent delegate (may move or burn the tokens of any account), a transfer hook (its program runs
    with every transfer, and only an exact simulated effect lets it; unset, its authority may set one),
    a transfer fee (its authority may change it)."""
    rules = []
    if PERMANENT_DELEGATE in mint.extensions:
        delegate = extension_key(mint.extensions[PERMANENT_DELEGATE])
        if delegate is not None:
            rules.append(f"the issuer's permanent delegate {delegate} may move or burn tokens of any account")
    if TRANSFER_HOOK in mint.extensions:
        value = mint.extensions[TRANSFER_HOOK]
        authority, program = extension_key(value, 0), extension_key(value, 32)
        if program is not None:
            rules.append(
                f"the issuer's transfer hook program {program} runs with every transfer "
                f"(authority {authority or 'none'}); this transaction's whole effect was checked with it"
            )
        elif authority is not None:
            rules.append(
                f"the issuer's transfer-hook authority {authority} may set a program to run with every transfer"
            )
    if TRANSFER_FEE_CONFIG in mint.extensions and len(mint.extensions[TRANSFER_FEE_CONFIG]) >= 108:
        value = mint.extensions[TRANSFER_FEE_CONFIG]
        authority = extension_key(value, 0)
        (bps,) = struct.unpack_from("<H", value, 106)
        if authority is not None or bps:
            rules.append(
                f"the issuer's transfer fee is {bps} basis points"
                + (f"; {authority} may change it" if authority is not None else "")
            )
    return rules


def refusals(mint: MintInfo) -> list[str]:
    """What makes the asset unusable for an action, each with its reason: paused, non-transferable,
    or new accounts frozen by default."""
    found = []
    if NON_TRANSFERABLE in mint.extensions:
        found.append("is non-transferable: its tokens cannot move into or out of a strategy")
    pausable = mint.extensions.get(PAUSABLE)
    if pausable is not None and len(pausable) >= 33 and pausable[32]:
        found.append("is paused by its issuer: no transfer, mint or burn succeeds")
    state = mint.extensions.get(DEFAULT_ACCOUNT_STATE)
    if state is not None and state[:1] == bytes([ACCOUNT_STATE_FROZEN]):
        found.append("freezes every new token account by default: a new account could not receive it")
    return found


def mint_data(
    decimals: int,
    *,
    authority: Pubkey | None,
    freeze_authority: Pubkey | None = None,
    supply: int = 0,
    extra: Iterable[tuple[int, bytes]] = (),
) -> bytes:
    """A mint's bytes: SPL Token's 82 when `extra` is empty, else Token-2022's base with those extensions."""

    def option(key: Pubkey | None) -> bytes:
        return struct.pack("<I", 1) + bytes(key) if key is not None else bytes(36)

    base = option(authority) + struct.pack("<QBB", supply, decimals, 1) + option(freeze_authority)
    entries = list(extra)
    if not entries:
        return base
    tlv = b"".join(struct.pack("<HH", kind, len(value)) + value for kind, value in entries)
    return base + bytes(TOKEN_ACCOUNT_SIZE - MINT_SIZE) + bytes([ACCOUNT_TYPE_MINT]) + tlv
