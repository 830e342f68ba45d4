"""Partial signing: fill the slots our keypairs own, keep every other signature as it is."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from yieldcli.chain.tx.decode import encode_transaction
from yieldcli.chain.tx.signatures import message_bytes


class Signer(Protocol):
    """What signs a slot: a solders Keypair, or a key on a device (`yieldcli.chain.keys.ledger.signer.LedgerSigner`).

    A device may also have `before_sign(message: bytes) -> None`, called before the user is asked,
    that raises when it could not sign this message (a Ledger with blind signing off), and
    `message_hash(message: bytes) -> str`, what its screen will show for the person to compare."""

    def pubkey(self) -> Pubkey: ...

    def sign_message(self, message: bytes, /) -> Signature: ...


def before_sign(signers: Iterable[Signer], message: bytes) -> None:
    for signer in signers:
        check = getattr(signer, "before_sign", None)
        if check is not None:
            check(message)


@dataclass(frozen=True)
class SignResult:
    transaction: VersionedTransaction
    signed: tuple[Pubkey, ...]  # slots filled by this call
    missing: tuple[Pubkey, ...]  # required signers whose slot is still empty

    @property
    def complete(self) -> bool:
        return not self.missing

    def to_base64(self) -> str:
        return encode_transaction(self.transaction)


def sign_transaction(tx: VersionedTransaction, keypairs: Iterable[Signer]) -> SignResult:
    """Sign the slots whose key is one of `keypairs`; other slots keep their signature or stay empty."""
    message = tx.message
    keys = list(message.account_keys)
    n_required = message.header.num_required_signatures
    by_key = {kp.pubkey(): kp for kp in keypairs}
    payload = message_bytes(tx)
    empty = Signature.default()
    signatures = list(tx.signatures) + [empty] * (n_required - len(tx.signatures))
    signed: list[Pubkey] = []
    for i in range(n_required):
        keypair = by_key.get(keys[i])
        if keypair is not None:
            signatures[i] = keypair.sign_message(payload)
            signed.append(keys[i])
    missing = tuple(keys[i] for i in range(n_required) if signatures[i] == empty)
    return SignResult(VersionedTransaction.populate(message, signatures[:n_required]), tuple(signed), missing)
