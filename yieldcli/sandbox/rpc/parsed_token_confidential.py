"""`jsonParsed` of Token-2022's confidential transfer (27) and confidential transfer fee (37)
instructions, in a validator's shapes (agave's parse_token/extension/confidential_transfer.rs and
confidential_transfer_fee.rs): ElGamal public keys and decryptable balances in base64, proof offsets
as signed numbers, and the accounts named as a validator names them, its guesses included (extra
accounts are taken for proof accounts before signers; a deposit's or withdrawal's second and third
accounts are called its destination and mint). A payload of the wrong length stays raw (None), as
a validator cannot decode it."""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable

from yieldcli.sandbox.rpc.parsed_token_ext import Info, nonzero

Found = tuple[str, Info] | None
# Payload lengths (after the two tag bytes) of the instructions that carry data: a validator decodes
# each as a fixed-size struct and leaves any other length raw.
_TRANSFER_SIZES = {0: 65, 1: 33, 2: 45, 4: 1, 5: 9, 6: 47, 7: 39, 8: 44, 13: 41}
_FEE_SIZES = {0: 64, 1: 37, 2: 38}
_CREDITS = {
    9: "enableConfidentialTransferConfidentialCredits",
    10: "disableConfidentialTransferConfidentialCredits",
    11: "enableConfidentialTransferNonConfidentialCredits",
    12: "disableConfidentialTransferNonConfidentialCredits",
}


def _b64(d: bytes, at: int, size: int) -> str:
    return base64.b64encode(d[at : at + size]).decode("ascii")


def _elgamal(d: bytes, at: int) -> str | None:
    """An OptionalNonZeroElGamalPubkey, base64 as its Display writes it; all zeros is none."""
    return None if d[at : at + 32] == bytes(32) else _b64(d, at, 32)


def _i8(d: bytes, at: int) -> int:
    return int(struct.unpack_from("<b", d, at)[0])


def _u64(d: bytes, at: int) -> int:
    return int(struct.unpack_from("<Q", d, at)[0])


def _signers(info: Info, a: list[str], at: int, name: str = "owner") -> Info:
    """agave's parse_signers: the authority at `at` (a multisig when signers follow), none if absent."""
    if len(a) > at + 1:
        info["multisig" + name[0].upper() + name[1:]] = a[at]
        info["signers"] = a[at + 1 :]
    elif at < len(a):
        info[name] = a[at]
    return info


def _need(a: list[str], count: int) -> None:
    if len(a) < count:
        raise IndexError(f"{count} accounts expected")


def _proofs(info: Info, a: list[str], at: int, offsets: list[int], names: tuple[str, ...]) -> Info:
    """The instructions sysvar when a proof rides in the transaction, then each proof account while
    one account is left for the owner, then the owner (agave's guess, multisig signers aside)."""
    if any(offsets):
        info["instructionsSysvar"] = a[at]
        at += 1
    for name in names:
        if at < len(a) - 1:
            info[name] = a[at]
            at += 1
    return _signers(info, a, at)


def _context_or_sysvar(info: Info, a: list[str], offset: int, record_at: int) -> Info:
    """ConfigureAccount and EmptyAccount: a context state account, or the sysvar and perhaps a record."""
    at = record_at - 1
    if offset == 0:
        info["proofContextStateAccount"] = a[at]
        return _signers(info, a, record_at)
    info["instructionsSysvar"] = a[at]
    if len(a) > record_at + 1:
        info["recordAccount"] = a[record_at]
        return _signers(info, a, record_at + 1)
    return _signers(info, a, record_at)


def _transfer_ix(sub: int, a: list[str], d: bytes) -> Found:
    if sub == 0:
        _need(a, 1)
        info: Info = {"mint": a[0], "autoApproveNewAccounts": bool(d[34]), "auditorElGamalPubkey": _elgamal(d, 35)}
        authority = nonzero(d, 2)
        return "initializeConfidentialTransferMint", info if authority is None else {**info, "authority": authority}
    if sub == 1:
        _need(a, 2)
        info = {
            "mint": a[0],
            "confidentialTransferMintAuthority": a[1],
            "autoApproveNewAccounts": bool(d[2]),
            "auditorElGamalPubkey": _elgamal(d, 3),
        }
        return "updateConfidentialTransferMint", info
    if sub == 2:
        _need(a, 4)
        info = {
            "account": a[0],
            "mint": a[1],
            "decryptableZeroBalance": _b64(d, 2, 36),
            "maximumPendingBalanceCreditCounter": _u64(d, 38),
            "proofInstructionOffset": _i8(d, 46),
        }
        return "configureConfidentialTransferAccount", _context_or_sysvar(info, a, _i8(d, 46), 3)
    if sub == 3:
        _need(a, 3)
        info = {"account": a[0], "mint": a[1], "confidentialTransferAuditorAuthority": a[2]}
        return "approveConfidentialTransferAccount", info
    if sub == 4:
        _need(a, 3)
        info = {"account": a[0], "proofInstructionOffset": _i8(d, 2)}
        return "emptyConfidentialTransferAccount", _context_or_sysvar(info, a, _i8(d, 2), 2)
    if sub == 5:
        _need(a, 4)
        info = {"source": a[0], "destination": a[1], "mint": a[2], "amount": _u64(d, 2), "decimals": d[10]}
        return "depositConfidentialTransfer", _signers(info, a, 3)
    if sub == 6:
        _need(a, 5)
        offsets = [_i8(d, 47), _i8(d, 48)]
        info = {
            "source": a[0],
            "destination": a[1],
            "mint": a[2],
            "amount": _u64(d, 2),
            "decimals": d[10],
            "newDecryptableAvailableBalance": _b64(d, 11, 36),
            "equalityProofInstructionOffset": offsets[0],
            "rangeProofInstructionOffset": offsets[1],
        }
        return "withdrawConfidentialTransfer", _proofs(
            info, a, 3, offsets, ("equalityProofAccount", "rangeProofAccount")
        )
    if sub == 7:
        _need(a, 4)
        offsets = [_i8(d, 38), _i8(d, 39), _i8(d, 40)]
        info = {
            "source": a[0],
            "mint": a[1],
            "destination": a[2],
            "newSourceDecryptableAvailableBalance": _b64(d, 2, 36),
            "equalityProofInstructionOffset": offsets[0],
            "ciphertextValidityProofInstructionOffset": offsets[1],
            "rangeProofInstructionOffset": offsets[2],
        }
        names = ("equalityProofAccount", "ciphertextValidityProofAccount", "rangeProofAccount")
        return "confidentialTransfer", _proofs(info, a, 3, offsets, names)
    if sub == 8:
        _need(a, 2)
        info = {
            "account": a[0],
            "newDecryptableAvailableBalance": _b64(d, 10, 36),
            "expectedPendingBalanceCreditCounter": _u64(d, 2),
        }
        return "applyPendingConfidentialTransferBalance", _signers(info, a, 1)
    if sub in _CREDITS:
        _need(a, 2)
        return _CREDITS[sub], _signers({"account": a[0]}, a, 1)
    if sub == 13:
        return _transfer_with_fee(a, d)
    if sub == 14:
        _need(a, 3)
        return "configureConfidentialAccountWithRegistry", {"account": a[0], "mint": a[1], "registry": a[2]}
    return None


def _transfer_with_fee(a: list[str], d: bytes) -> Found:
    _need(a, 4)
    # In the data: equality, transfer amount validity, fee sigma, fee validity, range.
    equality, amount_validity, sigma, fee_validity, ranged = (_i8(d, at) for at in range(38, 43))
    info: Info = {
        "source": a[0],
        "mint": a[1],
        "destination": a[2],
        "newSourceDecryptableAvailableBalance": _b64(d, 2, 36),
        "equalityProofInstructionOffset": equality,
        "transferAmountCiphertextValidityProofInstructionOffset": amount_validity,
        "feeCiphertextValidityProofInstructionOffset": fee_validity,
        "feeSigmaProofInstructionOffset": sigma,
        "rangeProofInstructionOffset": ranged,
    }
    names = (
        "equalityProofAccount",
        "transferAmountCiphertextValidityProofAccount",
        "feeCiphertextValidityProofAccount",
        "feeSigmaProofAccount",
        "rangeProofAccount",
    )
    offsets = [equality, amount_validity, fee_validity, sigma, ranged]
    return "confidentialTransferWithFee", _proofs(info, a, 3, offsets, names)


def _fee_ix(sub: int, a: list[str], d: bytes) -> Found:
    if sub == 0:
        _need(a, 1)
        info: Info = {"mint": a[0], "withdrawWithheldAuthorityElGamalPubkey": _elgamal(d, 34)}
        authority = nonzero(d, 2)
        return "initializeConfidentialTransferFeeConfig", info if authority is None else {
            **info,
            "authority": authority,
        }
    if sub == 1:
        _need(a, 4)
        offset = _i8(d, 2)
        info = {
            "mint": a[0],
            "feeRecipient": a[1],
            "proofInstructionOffset": offset,
            "newDecryptableAvailableBalance": _b64(d, 3, 36),
        }
        at = 2
        if at < len(a) - 1:
            info["proofContextStateAccount" if offset == 0 else "instructionsSysvar"] = a[at]
            at += 1
        kind = "withdrawWithheldConfidentialTransferTokensFromMint"
        return kind, _signers(info, a, at, "withdrawWithheldAuthority")
    if sub == 2:
        count, offset = d[2], _i8(d, 3)
        _need(a, 4 + count)
        first = len(a) - count
        info = {
            "mint": a[0],
            "feeRecipient": a[1],
            "proofInstructionOffset": offset,
            "newDecryptableAvailableBalance": _b64(d, 4, 36),
            ("proofContextStateAccount" if offset == 0 else "instructionsSysvar"): a[2],
            "sourceAccounts": a[first:],
        }
        kind = "withdrawWithheldConfidentialTransferTokensFromAccounts"
        return kind, _signers(info, a[:first], 3, "withdrawWithheldAuthority")
    if sub == 3:
        _need(a, 1)
        return "harvestWithheldConfidentialTransferTokensToMint", {"mint": a[0], "sourceAccounts": a[1:]}
    if sub in (4, 5):
        _need(a, 2)
        kind = ("enable" if sub == 4 else "disable") + "ConfidentialTransferFeeHarvestToMint"
        return kind, _signers({"account": a[0]}, a, 1)
    return None


_BY_TAG: dict[int, tuple[dict[int, int], Callable[[int, list[str], bytes], Found]]] = {
    27: (_TRANSFER_SIZES, _transfer_ix),
    37: (_FEE_SIZES, _fee_ix),
}


def instruction(accounts: list[str], data: bytes) -> Found:
    """A confidential transfer or confidential fee instruction as (type, info); None when a validator
    would leave it raw (an unknown instruction, a payload of the wrong length)."""
    sizes, parse = _BY_TAG[data[0]]
    sub = data[1]
    if sub in sizes and len(data) - 2 != sizes[sub]:
        return None
    return parse(sub, accounts, data)
