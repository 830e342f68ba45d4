"""Mutations of a legitimate transaction, with no list of attacks: insert, drop, reorder and duplicate
instructions; swap an account for another of the cast; change an amount, a mode, a strategy key, a
writable or signer flag; move accounts into lookup tables (the sandbox's, the attacker's, one that does
not exist yet); put the transaction on a durable nonce; change the fee payer; compile it as a legacy
message; pre-fill the signature slots the attacker can sign.

Each operator changes a `Mutant` in place and returns one line saying what it did, so a failing case
reads as its recipe.
"""

from __future__ import annotations

import hashlib
import random
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.message import Message, MessageV0, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import AdvanceNonceAccountParams, advance_nonce_account
from solders.transaction import VersionedTransaction

from tests.guard.instructions import ATA_PROGRAM, COMPUTE_BUDGET, MAKERS, SYSTEM, Cast
from tests.guard.world import STRATEGY_PROGRAM, TOKEN, World
from yieldcli.solana import programs

PACKET_BYTES = 1232  # a bigger transaction never reaches a leader


@dataclass
class Mutant:
    instructions: list[Instruction]
    payer: Pubkey
    tables: list[Pubkey]  # lookup tables (that exist) the message may load accounts from
    missing_table: list[Pubkey] | None = None  # addresses of a table the attacker creates after the signature
    nonce: tuple[Pubkey, Pubkey] | None = None  # (nonce account, authority): a durable-nonce lifetime
    legacy: bool = False
    prefill: bool = False
    recipe: list[str] = field(default_factory=list)


Operator = Callable[[random.Random, Mutant, Cast, World], str]


def _pick(rng: random.Random, ixs: list[Instruction]) -> int:
    return rng.randrange(len(ixs))


def insert(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    maker = rng.choice(MAKERS)
    at = rng.randrange(len(m.instructions) + 1)
    m.instructions.insert(at, maker(rng, c))
    return f"insert {maker.__name__} at {at}"


def drop(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    if len(m.instructions) < 2:
        return insert(rng, m, c, w)
    at = _pick(rng, m.instructions)
    del m.instructions[at]
    return f"drop instruction {at}"


def reorder(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    if len(m.instructions) < 2:
        return duplicate(rng, m, c, w)
    i, j = rng.sample(range(len(m.instructions)), 2)
    m.instructions[i], m.instructions[j] = m.instructions[j], m.instructions[i]
    return f"swap instructions {i} and {j}"


def duplicate(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    at = _pick(rng, m.instructions)
    to = rng.randrange(len(m.instructions) + 1)
    m.instructions.insert(to, m.instructions[at])
    return f"duplicate instruction {at} at {to}"


def _like(rng: random.Random, key: Pubkey, c: Cast) -> Pubkey:
    """Another account of the same sort when there is one (a token account for a token account ...)."""
    for group in (c.users_tokens + c.others_tokens, c.positions, c.signers, c.mints):
        if key in group and rng.random() < 0.7:
            return rng.choice(group)
    return rng.choice(c.every)


def swap_account(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    candidates = [i for i, ix in enumerate(m.instructions) if ix.accounts]
    if not candidates:
        return insert(rng, m, c, w)
    at = rng.choice(candidates)
    ix = m.instructions[at]
    metas = list(ix.accounts)
    k = rng.randrange(len(metas))
    new = _like(rng, metas[k].pubkey, c)
    metas[k] = AccountMeta(new, metas[k].is_signer, metas[k].is_writable)
    m.instructions[at] = Instruction(ix.program_id, bytes(ix.data), metas)
    return f"instruction {at} account {k}: {new}"


def flip_flag(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    candidates = [i for i, ix in enumerate(m.instructions) if ix.accounts]
    if not candidates:
        return insert(rng, m, c, w)
    at = rng.choice(candidates)
    ix = m.instructions[at]
    metas = list(ix.accounts)
    k = rng.randrange(len(metas))
    old = metas[k]
    signer = rng.random() < 0.5
    metas[k] = AccountMeta(old.pubkey, old.is_signer ^ signer, old.is_writable ^ (not signer))
    m.instructions[at] = Instruction(ix.program_id, bytes(ix.data), metas)
    return f"instruction {at} account {k}: {'signer' if signer else 'writable'} flipped"


# Where an instruction keeps an amount: (program, first data byte) -> (offset, format).
_AMOUNTS = {
    (STRATEGY_PROGRAM, 1): (1, "<Q"),
    (STRATEGY_PROGRAM, 2): (1, "<Q"),
    (STRATEGY_PROGRAM, 4): (1, "<Q"),
    (TOKEN, 3): (1, "<Q"),
    (TOKEN, 4): (1, "<Q"),
    (TOKEN, 7): (1, "<Q"),
    (TOKEN, 8): (1, "<Q"),
    (TOKEN, 12): (1, "<Q"),
    (SYSTEM, 2): (4, "<Q"),
    (COMPUTE_BUDGET, 2): (1, "<I"),
    (COMPUTE_BUDGET, 3): (1, "<Q"),
}


def change_data(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    """An amount, a withdrawal's mode or a deposit's strategy key; else one byte of the data."""
    at = _pick(rng, m.instructions)
    ix = m.instructions[at]
    data = bytearray(bytes(ix.data))
    if not data:
        return insert(rng, m, c, w)
    where = _AMOUNTS.get((ix.program_id, data[0]))
    if ix.program_id == STRATEGY_PROGRAM and data[0] == 2 and len(data) == 10 and rng.random() < 0.3:
        data[9] = rng.choice([0, 1, 2, 255])
        what = f"mode {data[9]}"
    elif ix.program_id == STRATEGY_PROGRAM and data[0] == 1 and len(data) == 41 and rng.random() < 0.3:
        other = rng.choice(c.strategy_ids)
        data[9:41] = hashlib.sha256(other.encode()).digest()
        what = f"strategy key of {other}"
    elif where is not None and len(data) >= where[0] + struct.calcsize(where[1]):
        offset, fmt = where
        (value,) = struct.unpack_from(fmt, data, offset)
        top = 2 ** (8 * struct.calcsize(fmt)) - 1
        new = rng.choice([0, 1, max(value - 1, 0), min(value + 1, top), min(value * 2, top), value // 2, top])
        struct.pack_into(fmt, data, offset, new)
        what = f"amount {value} -> {new}"
    else:
        i = rng.randrange(len(data))
        data[i] = rng.randrange(256)
        what = f"byte {i} = {data[i]}"
    m.instructions[at] = Instruction(ix.program_id, bytes(data), list(ix.accounts))
    return f"instruction {at}: {what}"


def tables(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    choice = rng.choice(["attacker", "none", "missing"])
    if choice == "attacker":
        m.tables = list(w.tables)
        return "accounts from the attacker's lookup table too"
    if choice == "none":
        m.tables = []
        return "no lookup table"
    keys = [a.pubkey for ix in m.instructions for a in ix.accounts if not a.is_signer]
    extra = [c.bystander, c.attacker, *c.others_tokens[:4]]
    m.missing_table = list(dict.fromkeys(rng.sample(keys, min(len(keys), 3)) + rng.sample(extra, 2)))
    return f"accounts from a lookup table not created yet: {[str(k) for k in m.missing_table]}"


def durable_nonce(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    m.nonce = rng.choice(c.nonces)
    return f"durable nonce {m.nonce[0]} (authority {m.nonce[1]})"


def fee_payer(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    m.payer = rng.choice((c.attacker, c.bystander, *c.signers[2:]))
    return f"fee payer {m.payer}"


def legacy(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    m.legacy = True
    return "legacy message"


def co_signer(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    """Another signature slot, the attacker's or a made-up key's, already signed."""
    signer = rng.choice(c.signers[1:])
    at = _pick(rng, m.instructions)
    ix = m.instructions[at]
    m.instructions[at] = Instruction(ix.program_id, bytes(ix.data), [*ix.accounts, AccountMeta(signer, True, False)])
    m.prefill = True
    return f"instruction {at} also signed by {signer}, signature pre-filled"


def plain_create(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    """An associated account opened by `Create`, not `CreateIdempotent` (a front-runner makes it fail)."""
    found = [i for i, ix in enumerate(m.instructions) if ix.program_id == ATA_PROGRAM]
    if not found:
        owner = rng.choice((c.user, c.bystander))
        m.instructions.insert(
            0, programs.create_associated_token_account(c.user, owner, rng.choice(c.mints), idempotent=False)
        )
        return f"a plain Create of {owner}'s account inserted"
    at = rng.choice(found)
    ix = m.instructions[at]
    m.instructions[at] = Instruction(ix.program_id, b"\x00", ix.accounts)
    return f"instruction {at} made a plain Create"


def prefill(rng: random.Random, m: Mutant, c: Cast, w: World) -> str:
    m.prefill = True
    return "slots the attacker holds pre-filled"


OPERATORS: tuple[tuple[Operator, int], ...] = (  # (operator, weight)
    (insert, 30),
    (drop, 6),
    (reorder, 5),
    (duplicate, 6),
    (swap_account, 20),
    (flip_flag, 6),
    (change_data, 14),
    (tables, 5),
    (durable_nonce, 4),
    (fee_payer, 3),
    (legacy, 2),
    (co_signer, 4),
    (prefill, 1),
    (plain_create, 3),
)


def mutate(rng: random.Random, m: Mutant, c: Cast, w: World) -> Mutant:
    count = 1 + (rng.random() < 0.4) + (rng.random() < 0.15)
    ops, weights = zip(*OPERATORS, strict=True)
    for op in rng.choices(ops, weights, k=count):
        m.recipe.append(f"{op.__name__}: {op(rng, m, c, w)}")
    return m


def compile_mutant(m: Mutant, w: World) -> tuple[VersionedTransaction, Pubkey | None] | None:
    """The transaction (every slot empty, or the attacker's pre-filled) and the address of the table the
    attacker creates later; None when no valid transaction comes of it."""
    ixs = list(m.instructions)
    blockhash = w.blockhash()
    if m.nonce is not None:
        nonce, authority = m.nonce
        ixs.insert(0, advance_nonce_account(AdvanceNonceAccountParams(nonce_pubkey=nonce, authorized_pubkey=authority)))
        account = w.runtime.get_account(nonce)
        blockhash = Hash(bytes(account.data)[40:72])
    tables = [AddressLookupTableAccount(k, w.tables[k]) for k in m.tables]
    later = None
    if m.missing_table:
        later = programs.create_lookup_table(w.attacker.pubkey(), w.attacker.pubkey(), w.runtime.slot)[1]
        tables.append(AddressLookupTableAccount(later, m.missing_table))
    try:
        if m.legacy:
            message: Message | MessageV0 = Message.new_with_blockhash(ixs, m.payer, blockhash)
        else:
            message = MessageV0.try_compile(m.payer, ixs, tables, blockhash)
    except BaseException as exc:  # solders raises pyo3 panics for some impossible messages
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return None
    count = message.header.num_required_signatures
    signatures = [Signature.default()] * count
    if m.prefill:
        keys = w.keys_of_attacker()
        payload = to_bytes_versioned(message) if isinstance(message, MessageV0) else bytes(message)
        for i, key in enumerate(message.account_keys[:count]):
            if key in keys:
                signatures[i] = keys[key].sign_message(payload)
    tx = VersionedTransaction.populate(message, signatures)
    if len(bytes(tx)) > PACKET_BYTES:
        return None
    return tx, later
