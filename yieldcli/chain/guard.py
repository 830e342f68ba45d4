"""Refuse to sign what the user did not ask for: a foreign fee payer, a signer nobody named."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from yieldcli.chain.decode import SUPPORTED_VERSIONS, message_version
from yieldcli.chain.sign import signature_slots
from yieldcli.errors import Refused


class SigningRefused(Refused):
    """The transaction is not one we sign; `reason` is a short machine-readable tag."""

    def __init__(self, message: str, *, reason: str, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.reason = reason


@dataclass(frozen=True)
class SigningPlan:
    to_sign: tuple[int, ...]  # signature slots our signers will fill
    already_signed: tuple[int, ...]  # slots holding a signature that verifies; kept as they are

    @property
    def slots(self) -> tuple[int, ...]:
        return self.to_sign


def check_signable(tx: VersionedTransaction, expected_payer: Pubkey, my_signers: Iterable[Pubkey]) -> SigningPlan:
    """Raise `SigningRefused` unless `tx` pays fees from `expected_payer` and needs no signer but ours."""
    version = message_version(tx)
    if version not in SUPPORTED_VERSIONS:
        raise SigningRefused(
            f"refusing to sign: transaction message version {version} is not supported (only legacy and v0)",
            reason="unsupported_version",
        )
    keys = list(tx.message.account_keys)
    n_required = tx.message.header.num_required_signatures
    if not keys or n_required == 0:
        raise SigningRefused("refusing to sign: the transaction has no fee payer", reason="no_fee_payer")
    if keys[0] != expected_payer:
        raise SigningRefused(
            f"refusing to sign: the fee payer is {keys[0]}, not {expected_payer}",
            reason="fee_payer_mismatch",
            hint="the service built this transaction for another payer; request it again with your payer",
        )
    mine = set(my_signers)
    to_sign: list[int] = []
    done: list[int] = []
    missing: list[str] = []
    for slot in signature_slots(tx):
        if slot.signer in mine:
            (done if slot.valid else to_sign).append(slot.index)
        elif slot.valid:
            done.append(slot.index)
        else:
            missing.append(f"{slot.signer} (signature slot {slot.index}{', present but invalid' if slot.present else ''})")
    if missing:
        raise SigningRefused(
            "refusing to sign: the transaction also needs a signature from " + ", ".join(missing),
            reason="unknown_signer",
            hint="sign only transactions whose every required signer is a keypair you passed",
        )
    return SigningPlan(tuple(to_sign), tuple(done))
