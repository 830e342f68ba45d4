"""Signature-verification precompile instructions that verify one valid signature `n` times: each
declared signature is charged as one of the message's (issue 35's fee the guard did not count).

Ed25519 and Secp256r1 are made here whole (a key, a message, its signature, `n` offsets to them); the
Secp256k1 program's instructions are counted the same way by their first byte.
"""

from __future__ import annotations

import struct

from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey

ED25519 = Pubkey.from_string("Ed25519SigVerify111111111111111111111111111")
SECP256K1 = Pubkey.from_string("KeccakSecp256k11111111111111111111111111111")
SECP256R1 = Pubkey.from_string("Secp256r1SigVerify1111111111111111111111111")
THIS_INSTRUCTION = 0xFFFF
_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def _offsets_then(n: int, signature: bytes, public_key: bytes, message: bytes, *, key_first: bool = False) -> bytes:
    head = 2 + 14 * n
    first, second = (public_key, signature) if key_first else (signature, public_key)
    at_sig = head + (len(first) if key_first else 0)
    at_key = head + (0 if key_first else len(first))
    at_msg = head + len(first) + len(second)
    entry = struct.pack(
        "<HHHHHHH", at_sig, THIS_INSTRUCTION, at_key, THIS_INSTRUCTION, at_msg, len(message), THIS_INSTRUCTION
    )
    return struct.pack("<BB", n, 0) + entry * n + first + second + message


def ed25519_verify(n: int, message: bytes = b"verified again") -> Instruction:
    """An Ed25519 instruction that verifies one valid signature `n` times."""
    key = Keypair()
    signature = bytes(key.sign_message(message))
    return Instruction(ED25519, _offsets_then(n, signature, bytes(key.pubkey()), message), [])


SECP256R1_MAX = 8  # the most signatures the Secp256r1 program takes in one instruction


def secp256r1_verify(n: int, message: bytes = b"verified again") -> Instruction:
    """A Secp256r1 instruction that verifies one valid (low-S) P-256 signature `n` times (at most 8)."""
    assert 0 < n <= SECP256R1_MAX
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    key = ec.generate_private_key(ec.SECP256R1())
    r, s = decode_dss_signature(key.sign(message, ec.ECDSA(hashes.SHA256())))
    s = min(s, _P256_ORDER - s)
    signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    public = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.CompressedPoint)
    return Instruction(SECP256R1, _offsets_then(n, signature, public, message), [])


def precompiles(make: object, n: int) -> list[Instruction]:
    """`n` verifications as instructions of the program `make` builds for, as few as it takes."""
    most = SECP256R1_MAX if make is secp256r1_verify else n
    assert callable(make)
    return [make(min(most, n - done)) for done in range(0, n, most)]


def secp256k1_declaring(n: int) -> Instruction:
    """A Secp256k1 instruction's first byte: `n` signatures (its count is all the fee reads)."""
    return Instruction(SECP256K1, bytes([n]) + bytes(11 * n), [])
