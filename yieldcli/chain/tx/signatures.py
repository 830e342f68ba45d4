"""A transaction's signature slots: who must sign, whose signature is there, whether each verifies;
and the bytes a signer signs. Read by the review and the guard; filled by `keys.sign`."""

from __future__ import annotations

from dataclasses import dataclass

from solders.message import to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction


def message_bytes(tx: VersionedTransaction) -> bytes:
    """The bytes signers sign: with the 0x80 version prefix for v0 (`bytes(MessageV0)` lacks it)."""
    return bytes(to_bytes_versioned(tx.message))


@dataclass(frozen=True)
class SignatureSlot:
    index: int
    signer: Pubkey
    present: bool  # not the empty `Signature.default()`
    valid: bool  # present and verifies against the message


def signature_slots(tx: VersionedTransaction) -> list[SignatureSlot]:
    """Every required signature slot of `tx`, whether it is filled and whether it verifies."""
    keys = tx.message.account_keys
    verified = tx.verify_with_results()
    empty = Signature.default()
    slots = []
    for i in range(tx.message.header.num_required_signatures):
        present = i < len(tx.signatures) and tx.signatures[i] != empty
        slots.append(SignatureSlot(i, keys[i], present, present and i < len(verified) and bool(verified[i])))
    return slots
