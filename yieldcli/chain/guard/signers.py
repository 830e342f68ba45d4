"""Refuse to sign what the user did not ask for: a foreign fee payer, a co-signer nobody named.

Every signature slot belongs to a key we sign with or to one the user named (the payer, the wallet, a
nonce authority, `--wallet` for the two-party flow). A slot someone else already filled is refused too:
a co-signer's signature already in place would let that party decide when the transaction lands. (A
signature that does not verify is refused by the pipeline, with the review: `transact.complete`.)
"""

from __future__ import annotations

from collections.abc import Iterable

from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from yieldcli.chain.tx.decode import SUPPORTED_VERSIONS, message_version
from yieldcli.chain.tx.signatures import signature_slots
from yieldcli.errors import Refused


class SigningRefused(Refused):
    """The transaction is not one we sign; `reason` is a short machine-readable tag."""

    def __init__(self, message: str, *, reason: str, hint: str | None = None):
        super().__init__(message, hint=hint, kind=f"refused.{reason}")
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
    slots = signature_slots(tx)
    if all(slot.present for slot in slots):
        mine |= {slot.signer for slot in slots}  # nothing is left for us to sign: only what verifies is sent
    strangers: list[str] = []
    for slot in slots:
        if slot.signer not in mine:
            strangers.append(f"{slot.signer} (signature slot {slot.index}{', already signed' if slot.present else ''})")
    if strangers:
        raise SigningRefused(
            "refusing to sign: the transaction also needs a signature from a key nobody named: " + ", ".join(strangers),
            reason="unknown_signer",
            hint="sign only transactions whose every signer is a keypair you passed, or a key you named "
            "as the payer or a co-signer",
        )
