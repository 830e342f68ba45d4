"""Refuse to sign what the user did not ask for: a foreign fee payer, a signer nobody named."""

from __future__ import annotations

from collections.abc import Iterable

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


def check_signable(tx: VersionedTransaction, expected_payer: Pubkey, my_signers: Iterable[Pubkey]) -> None:
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
    missing: list[str] = []
    for slot in signature_slots(tx):
        # Our keys fill their slots; any other slot must already hold a signature that verifies.
        if slot.signer not in mine and not slot.valid:
            missing.append(
                f"{slot.signer} (signature slot {slot.index}{', present but invalid' if slot.present else ''})"
            )
    if missing:
        raise SigningRefused(
            "refusing to sign: the transaction also needs a signature from " + ", ".join(missing),
            reason="unknown_signer",
            hint="sign only transactions whose every required signer is a keypair you passed",
        )
